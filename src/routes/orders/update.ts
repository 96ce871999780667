import type { Queryable } from "../../db/driver";
import type { Store } from "../../db/platform";
import { ApiError } from "../../errors";
import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { nothingToUpdate } from "../../http/validate";
import { queueMail } from "../../mail/outbox";
import { orderStatusChanged } from "../../mail/templates";
import { type Columns, changedColumns, sendsAnyOf } from "../changes";
import { defineRoute } from "../define";
import { getOrder, type OrderRow, toOrder } from "./row";
import { SILENT_STATUSES, type UpdateBody, updateBody, updatedOrderOut } from "./schema";

interface Status {
  id: number;
  name: string;
}

/** The fields of the body that change the order (everything but `notifyCustomer`), and their columns. */
const COLUMN_OF: Columns<UpdateBody, OrderRow> = {
  status: "status_id",
  paid: "paid",
  trackingNumber: "tracking_number",
  adminNotes: "admin_notes",
};

/** The status the body names, or 400 `invalid_field` listing the store's ids. */
async function requireStatus(db: Queryable, id: number): Promise<Status> {
  const status = await db.get<Status>("SELECT id, name FROM order_statuses WHERE id = ?", [id]);
  if (status) return status;
  const statuses = await db.all<Status>("SELECT id FROM order_statuses ORDER BY id");
  const validIds = statuses.map((s) => s.id);
  const allowed = validIds.length
    ? `one of this store's status ids: ${validIds.join(", ")}`
    : "a status id, but this store has none";
  throw new ApiError("invalid_field", `Field "status" must be ${allowed}.`, {
    field: "status",
    validIds,
  });
}

/** All four conditions of api-contract.md §7 for the status email. */
function shouldNotify(
  store: Store,
  body: UpdateBody,
  row: OrderRow,
  statusChanged: boolean,
): boolean {
  return (
    body.notifyCustomer &&
    statusChanged &&
    !SILENT_STATUSES.has(row.status_id) &&
    row.customer_email !== "" &&
    store.settings.notifyStatusChange
  );
}

async function queueStatusEmail(
  tx: Queryable,
  store: Store,
  row: OrderRow,
  now: number,
): Promise<void> {
  const mail = orderStatusChanged({
    storeName: store.name,
    customerName: row.customer_name,
    orderNumber: row.number,
    statusName: row.status_name ?? "",
    trackingNumber: row.tracking_number,
  });
  await queueMail(tx, { ...mail, to: row.customer_email }, now);
}

/**
 * `PATCH /orders/{id}`: status, paid, tracking number, admin notes. Only sent fields
 * change; `updatedAt` moves only when a value really changes. The status email is
 * queued in the same transaction as the change.
 */
export const updateOrder = defineRoute({
  method: "PATCH",
  path: "/orders/:id",
  area: "orders",
  summary: "Update an order's status, paid flag, tracking number or admin notes",
  params: idParams,
  body: updateBody,
  response: updatedOrderOut,
  errors: ["invalid_field", "nothing_to_update", "not_found"],
  async handler(c, { params, body }) {
    if (!sendsAnyOf(body, COLUMN_OF)) throw nothingToUpdate();
    const db = c.get("db");
    const store = c.get("store");
    const deps = c.get("deps");
    // Statuses never change through the API, so they are checked before taking the write lock.
    const status = body.status === undefined ? null : await requireStatus(db, body.status);
    const now = deps.now();
    const { row, notified } = await db.transaction(async (tx) => {
      const row = await getOrder(tx, params.id);
      const changed = changedColumns(row, body, COLUMN_OF);
      if (Object.keys(changed).length === 0) return { row, notified: false };
      const assignments = Object.entries({ ...changed, updated_at: now });
      const columns = assignments.map(([column]) => `${column} = ?`).join(", ");
      await tx.run(`UPDATE orders SET ${columns} WHERE id = ?`, [
        ...assignments.map(([, value]) => value),
        row.id,
      ]);
      const statusChanged = changed.status_id !== undefined;
      const updated: OrderRow = { ...row, ...changed, updated_at: now };
      if (status && statusChanged) updated.status_name = status.name;
      const notify = shouldNotify(store, body, updated, statusChanged);
      if (notify) {
        await deps.beforeMailQueued(store.slug);
        await queueStatusEmail(tx, store, updated, now);
      }
      return { row: updated, notified: notify };
    });
    if (notified) deps.onMailQueued(store.slug);
    return ok(c, { ...toOrder(row), customerNotified: notified });
  },
});
