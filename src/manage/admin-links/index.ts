import { createAdminLinkRoute } from "./create";

export const adminLinkRoutes = [createAdminLinkRoute];
