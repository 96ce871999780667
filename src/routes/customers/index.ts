import type { RouteDef } from "../define";
import { createCustomer } from "./create";
import { getCustomerRoute } from "./get";
import { listCustomers } from "./list";
import { updateCustomer } from "./update";

export const customerRoutes: RouteDef[] = [
  listCustomers,
  getCustomerRoute,
  createCustomer,
  updateCustomer,
];
