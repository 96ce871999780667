import type { ManageRoute } from "./define";
import { keyRoutes } from "./keys";
import { storeRoutes } from "./stores";

/** Every endpoint of the management API. */
export const manageRoutes: ManageRoute[] = [...storeRoutes, ...keyRoutes];
