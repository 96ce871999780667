import type { RouteDef } from "../define";

export const orderRoutes: RouteDef[] = [];
