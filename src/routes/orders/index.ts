import type { RouteDef } from "../define";
import { getOrder } from "./get";
import { listOrders } from "./list";
import { updateOrder } from "./update";

export const orderRoutes: RouteDef[] = [listOrders, getOrder, updateOrder];
