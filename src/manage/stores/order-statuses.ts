import * as v from "valibot";
import type { StorePool } from "../../db/pool";
import { ApiError } from "../../errors";
import { readJsonArrayBody } from "../../http/json-body";
import { ok } from "../../http/respond";
import {
  insertOrderStatuses,
  type OrderStatus,
  readOrderStatuses,
} from "../../stores/order-statuses";
import { storeOr404 } from "../context";
import { defineManageRoute } from "../define";
import { orderStatusesBody, orderStatusOut, slugParams } from "./schema";

export const replaceOrderStatuses = defineManageRoute({
  method: "PUT",
  path: "/stores/:slug/order-statuses",
  summary: "Replace a store's order statuses; an id orders still use cannot be removed.",
  params: slugParams,
  body: orderStatusesBody,
  readBody: readJsonArrayBody,
  response: v.array(orderStatusOut),
  errors: ["status_in_use"],
  handler: async (c, { params, body }) => {
    const store = storeOr404(c, params.slug);
    const { after } = await replaceStatuses(c.get("deps").pool, store.slug, body);
    return ok(c, after);
  },
});

/**
 * Replaces a store's order statuses in one transaction, giving the set before and after;
 * 409 `status_in_use` (nothing changed) when orders still use an id the set leaves out.
 */
export function replaceStatuses(pool: StorePool, slug: string, statuses: OrderStatus[]) {
  return pool.use(slug, (db) =>
    db.transaction(async (tx) => {
      const kept = statuses.map((s) => s.id);
      const inUse = await tx.all<{ status_id: number }>(
        `SELECT DISTINCT status_id FROM orders WHERE status_id NOT IN (${kept.map(() => "?").join(", ")}) ORDER BY status_id`,
        kept,
      );
      if (inUse.length) {
        const ids = inUse.map((r) => r.status_id);
        throw new ApiError(
          "status_in_use",
          `Orders still use status ids ${ids.join(", ")}; keep them in the set.`,
        );
      }
      const before = await readOrderStatuses(tx);
      await tx.run("DELETE FROM order_statuses");
      await insertOrderStatuses(tx, statuses);
      return { before, after: await readOrderStatuses(tx) };
    }),
  );
}
