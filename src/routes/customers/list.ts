import * as v from "valibot";
import { type ListSource, listAnswer } from "../../http/pagination";
import { defineRoute } from "../define";
import { CUSTOMER_COLUMNS, type CustomerRow, emailKey, toCustomer } from "./row";
import { customerOut, listQuery } from "./schema";

const source: ListSource = {
  list: "customers",
  table: "customers",
  sortColumn: "created_at",
  columns: CUSTOMER_COLUMNS,
  since: "created_since",
  filters: {
    status: { column: "status" },
    email: { column: "email_lower", value: emailKey },
  },
};

export const listCustomers = defineRoute({
  method: "GET",
  path: "/customers",
  area: "customers",
  summary: "List customers, newest first (filters: created_since, status, email)",
  query: listQuery,
  response: v.array(customerOut),
  list: true,
  handler: (c, { query }) => listAnswer<CustomerRow>(c, source, query, toCustomer),
});
