import { notFound } from "../../errors";
import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { defineRoute } from "../define";
import { findOrder, toOrder } from "./row";
import { orderOut } from "./schema";

/** `GET /orders/{id}`: the full Order. */
export const getOrder = defineRoute({
  method: "GET",
  path: "/orders/:id",
  area: "orders",
  summary: "Get one order",
  params: idParams,
  response: orderOut,
  errors: ["not_found"],
  async handler(c, { params }) {
    const row = await findOrder(c.var.db, params.id);
    if (!row) throw notFound(`Order ${params.id}`);
    return ok(c, toOrder(row));
  },
});
