import type { RouteDef } from "../define";

export const customerRoutes: RouteDef[] = [];
