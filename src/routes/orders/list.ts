import * as v from "valibot";
import { type ListSource, listAnswer } from "../../http/pagination";
import { defineRoute } from "../define";
import { type ListedOrderRow, listedBytes, ORDER_LIST_COLUMNS, readLeftOut, toOrder } from "./row";
import { listQuery, orderOut } from "./schema";

/**
 * Each filter combination has an index that leads with its equality columns and ends in
 * (created_at, id): orders_created, orders_status_created, orders_paid_created,
 * orders_status_paid_created.
 */
export const orderListSource: ListSource<ListedOrderRow> = {
  list: "orders",
  table: "orders",
  sortColumn: "created_at",
  columns: ORDER_LIST_COLUMNS,
  since: "created_since",
  filters: { status: { column: "status_id" }, paid: { column: "paid" } },
  sized: { bytes: listedBytes, complete: readLeftOut },
};

/**
 * `GET /orders`: newest first by createdAt then id, keyset-paginated, so a page deep in
 * the table costs what the first costs. A `status` the store does not have is a filter
 * that matches nothing: an empty list.
 */
export const listOrders = defineRoute({
  method: "GET",
  path: "/orders",
  area: "orders",
  summary: "List orders, newest first",
  query: listQuery,
  response: v.array(orderOut),
  list: true,
  handler: (c, { query }) => listAnswer(c, orderListSource, query, toOrder),
});
