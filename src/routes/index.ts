import { customerRoutes } from "./customers";
import type { RouteDef } from "./define";
import { leadRoutes } from "./leads";
import { orderRoutes } from "./orders";
import { productRoutes } from "./products";

/** Every endpoint under /api/v1. */
export const apiRoutes: RouteDef[] = [
  ...orderRoutes,
  ...customerRoutes,
  ...productRoutes,
  ...leadRoutes,
];
