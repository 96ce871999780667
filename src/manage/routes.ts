import { adminLinkRoutes } from "./admin-links";
import type { ManageRoute } from "./define";
import { ingestRoutes } from "./ingest";
import { keyRoutes } from "./keys";
import { storeRoutes } from "./stores";

/** Every endpoint of the management API. */
export const manageRoutes: ManageRoute[] = [
  ...storeRoutes,
  ...keyRoutes,
  ...ingestRoutes,
  ...adminLinkRoutes,
];
