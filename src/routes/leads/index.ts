import type { RouteDef } from "../define";

export const leadRoutes: RouteDef[] = [];
