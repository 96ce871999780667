import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { defineRoute } from "../define";
import { getOrder, toOrder } from "./row";
import { orderOut } from "./schema";

/** `GET /orders/{id}`: the full Order. */
export const getOrderRoute = defineRoute({
  method: "GET",
  path: "/orders/:id",
  area: "orders",
  summary: "Get one order",
  params: idParams,
  response: orderOut,
  errors: ["not_found"],
  async handler(c, { params }) {
    return ok(c, toOrder(await getOrder(c.get("db"), params.id)));
  },
});
