import type { RouteDef } from "../define";
import { getOrderRoute } from "./get";
import { listOrders } from "./list";
import { updateOrder } from "./update";

export const orderRoutes: RouteDef[] = [listOrders, getOrderRoute, updateOrder];
