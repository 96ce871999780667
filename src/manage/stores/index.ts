import { createStore } from "./create";
import { deleteStore } from "./delete";
import { getStore } from "./get";
import { listStores } from "./list";
import { replaceOrderStatuses } from "./order-statuses";
import { updateStore } from "./update";

export const storeRoutes = [
  listStores,
  createStore,
  getStore,
  updateStore,
  replaceOrderStatuses,
  deleteStore,
];
