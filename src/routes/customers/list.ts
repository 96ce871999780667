import * as v from "valibot";
import type { SqlValue } from "../../db/driver";
import { type ListSource, listAnswer } from "../../http/pagination";
import { defineRoute } from "../define";
import { CUSTOMER_COLUMNS, type CustomerRow, emailKey, toCustomer } from "./row";
import { customerListQuery, customerOut } from "./schema";

const source: ListSource = {
  list: "customers",
  table: "customers",
  sortColumn: "created_at",
  columns: CUSTOMER_COLUMNS,
};

export const listCustomers = defineRoute({
  method: "GET",
  path: "/customers",
  area: "customers",
  summary: "List customers, newest first (filters: created_since, status, email)",
  query: customerListQuery,
  response: v.array(customerOut),
  list: true,
  async handler(c, { query }) {
    const email = query.email === undefined ? undefined : emailKey(query.email);
    const where: Record<string, SqlValue> = {};
    if (query.status !== undefined) where.status = query.status;
    if (email !== undefined) where.email_lower = email;
    return listAnswer<CustomerRow>(
      c,
      source,
      {
        limit: query.limit,
        cursor: query.cursor,
        since: query.created_since,
        where,
        filters: { created_since: query.created_since, status: query.status, email },
      },
      toCustomer,
    );
  },
});
