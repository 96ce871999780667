import * as v from "valibot";
import { type ListSource, listAnswer } from "../../http/pagination";
import { defineRoute } from "../define";
import { LEAD_COLUMNS, type LeadRow, toLead } from "./row";
import { leadOut, listQuery } from "./schema";

const source: ListSource = {
  list: "leads",
  table: "leads",
  sortColumn: "created_at",
  columns: LEAD_COLUMNS,
  since: "created_since",
};

export const listLeads = defineRoute({
  method: "GET",
  path: "/leads",
  area: "leads",
  summary: "List leads, newest first; `created_since` (inclusive) for sync.",
  query: listQuery,
  response: v.array(leadOut),
  list: true,
  handler: (c, { query }) => listAnswer<LeadRow>(c, source, query, toLead),
});
