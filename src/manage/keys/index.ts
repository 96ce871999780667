import { createStoreKey } from "./create";
import { deleteStoreKey } from "./delete";
import { listStoreKeys } from "./list";
import { rollStoreKey } from "./roll";

export const keyRoutes = [listStoreKeys, createStoreKey, deleteStoreKey, rollStoreKey];
