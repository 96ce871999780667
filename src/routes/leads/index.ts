import type { RouteDef } from "../define";
import { getLeadRoute } from "./get";
import { listLeads } from "./list";
import { updateLead } from "./update";

export const leadRoutes: RouteDef[] = [listLeads, getLeadRoute, updateLead];
