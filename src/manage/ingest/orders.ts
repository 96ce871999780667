import * as v from "valibot";
import { ApiError, invalidField } from "../../errors";
import { orderFixture, orderRecord } from "../../routes/orders/fixture";
import { getOrder, toOrder } from "../../routes/orders/row";
import { orderOut } from "../../routes/orders/schema";
import { defineManageRoute } from "../define";
import { slugParams } from "../stores/schema";

/** An order from checkout: the fixture's record without `id` (storeapi assigns it). */
const checkoutOrder = v.omit(orderRecord, ["id"]);

export const createOrder = defineManageRoute({
  method: "POST",
  path: "/stores/:slug/orders",
  summary: "Record an order from checkout (the fixture format of operations.md, without id).",
  params: slugParams,
  body: checkoutOrder,
  response: orderOut,
  status: 201,
  errors: ["number_taken"],
  async createInStore(c, { body }, tx) {
    const statuses = await tx.all<{ id: number }>("SELECT id FROM order_statuses ORDER BY id");
    const statusIds = new Set(statuses.map((s) => s.id));
    // The loader's own checks, with this store's statuses and the request's time as "now".
    const problem = orderFixture.check?.(body, { statusIds, now: c.get("deps").now() }, new Map());
    if (problem) {
      const [field, message] = problem;
      if (field === "status")
        throw new ApiError("invalid_field", `Field "status": ${message}`, {
          field,
          validIds: [...statusIds],
        });
      throw invalidField(field, `Field "${field}": ${message}`);
    }
    if (await tx.get("SELECT 1 AS found FROM orders WHERE number = ?", [body.number])) {
      throw new ApiError("number_taken", `The store already has an order number ${body.number}.`, {
        field: "number",
      });
    }
    await orderFixture.insert(tx, [body]);
    const row = await tx.get<{ id: number }>("SELECT max(id) AS id FROM orders");
    return { status: 201, data: toOrder(await getOrder(tx, row?.id ?? 0)) };
  },
});
