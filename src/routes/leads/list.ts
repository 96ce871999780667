import * as v from "valibot";
import { listPage } from "../../http/pagination";
import { okList } from "../../http/respond";
import { defineRoute } from "../define";
import { LEAD_COLUMNS, leadOut, type LeadRow, listQuery, toLead } from "./schema";

export const listLeads = defineRoute({
  method: "GET",
  path: "/leads",
  area: "leads",
  summary: "List leads, newest first; `created_since` (inclusive) for sync.",
  query: listQuery,
  response: v.array(leadOut),
  list: true,
  async handler(c, { query }) {
    const page = await listPage<LeadRow>(
      c,
      { list: "leads", table: "leads", sortColumn: "created_at", columns: LEAD_COLUMNS },
      { limit: query.limit, cursor: query.cursor, since: query.created_since, filters: { created_since: query.created_since } },
    );
    return okList(c, { ...page, data: page.data.map(toLead) });
  },
});
