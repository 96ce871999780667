import * as v from "valibot";
import { type ListQuery, type ListSource, listAnswer } from "../../http/pagination";
import { defineRoute } from "../define";
import { ORDER_COLUMNS, type OrderRow, toOrder } from "./row";
import { listQuery, orderOut } from "./schema";

export const orderListSource: ListSource = {
  list: "orders",
  table: "orders",
  sortColumn: "created_at",
  columns: ORDER_COLUMNS,
};

/**
 * The keyset query for the client's parameters. Each filter combination has an index
 * that leads with its equality columns and ends in (created_at, id): orders_created,
 * orders_status_created, orders_paid_created, orders_status_paid_created.
 */
export function orderListQuery(query: v.InferOutput<typeof listQuery>): ListQuery {
  const where: Record<string, number> = {};
  if (query.status !== undefined) where.status_id = query.status;
  if (query.paid !== undefined) where.paid = Number(query.paid);
  return {
    limit: query.limit,
    cursor: query.cursor,
    since: query.created_since,
    where,
    filters: { created_since: query.created_since, status: query.status, paid: query.paid },
  };
}

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
  handler: (c, { query }) =>
    listAnswer<OrderRow>(c, orderListSource, orderListQuery(query), toOrder),
});
