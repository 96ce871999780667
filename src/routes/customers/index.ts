import type { RouteDef } from "../define";
import { createCustomer } from "./create";
import { getCustomer } from "./get";
import { listCustomers } from "./list";
import { updateCustomer } from "./update";

export const customerRoutes: RouteDef[] = [listCustomers, getCustomer, createCustomer, updateCustomer];
