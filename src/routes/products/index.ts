import type { RouteDef } from "../define";

export const productRoutes: RouteDef[] = [];
