import type { AppDeps } from "../../app";
import type { Db, Queryable, RunResult, SqlValue, Statement } from "../../db/driver";
import type { Store } from "../../db/platform";
import { ApiError } from "../../errors";
import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { nothingToUpdate } from "../../http/validate";
import { type Mail, queueMailIfChanged } from "../../mail/outbox";
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

function statusEmail(store: Store, row: OrderRow): Mail {
  const mail = orderStatusChanged({
    storeName: store.name,
    customerName: row.customer_name,
    orderNumber: row.number,
    statusName: row.status_name ?? "",
    trackingNumber: row.tracking_number,
  });
  return { ...mail, to: row.customer_email };
}

/** The columns a PATCH may change, and `updated_at`: its write happens only if they are still as it read them. */
const GUARDED = ["status_id", "paid", "tracking_number", "admin_notes", "updated_at"] as const;

/** Races lost to other writes of the same order before the change is made under the write lock. */
const OPTIMISTIC_TRIES = 3;

export interface Update {
  store: Store;
  deps: AppDeps;
  id: number;
  body: UpdateBody;
}

interface Outcome {
  row: OrderRow;
  notified: boolean;
}

/**
 * The UPDATE that sets `changes` only if the order's `GUARDED` columns are still as in
 * `row` and the status it moves to is still the store's, by the name read (the host's
 * management API replaces a store's statuses).
 */
function updateIfUnchanged(
  row: OrderRow,
  changes: Partial<OrderRow>,
  newStatus: Status | null,
): Statement {
  const assignments = Object.entries(changes);
  const conditions = GUARDED.map((column) => `${column} IS ?`);
  const args = GUARDED.map((column): SqlValue => row[column]);
  if (newStatus) {
    conditions.push("EXISTS (SELECT 1 FROM order_statuses WHERE id = ? AND name = ?)");
    args.push(newStatus.id, newStatus.name);
  }
  return {
    sql: `UPDATE orders SET ${assignments.map(([column]) => `${column} = ?`).join(", ")}
          WHERE id = ? AND ${conditions.join(" AND ")}`,
    args: [...assignments.map(([, value]) => value as SqlValue), row.id, ...args],
  };
}

/**
 * Reads the status and the order through `read` and writes the change through `write`:
 * the UPDATE (only if nothing it read has changed) and the status email after it (only
 * if the UPDATE happened). Null when another write changed them in between.
 */
async function tryUpdate(
  read: Queryable,
  write: (statements: Statement[]) => Promise<RunResult[]>,
  { store, deps, id, body }: Update,
  readsMayLag = false,
): Promise<Outcome | null> {
  // Contract order: an unknown status is answered before a missing order.
  const status = body.status === undefined ? null : await requireStatus(read, body.status);
  const row = await getOrder(read, id);
  const changed = changedColumns(row, body, COLUMN_OF);
  if (Object.keys(changed).length === 0) return confirmUnchanged(row, readsMayLag, write);
  const now = deps.now();
  const statusChanged = changed.status_id !== undefined;
  const statements = [
    updateIfUnchanged(row, { ...changed, updated_at: now }, statusChanged ? status : null),
  ];
  const updated: OrderRow = { ...row, ...changed, updated_at: now };
  if (status && statusChanged) updated.status_name = status.name;
  const notify = shouldNotify(store, body, updated, statusChanged);
  if (notify) {
    await deps.beforeMailQueued(store.slug);
    statements.push(queueMailIfChanged(statusEmail(store, updated), now));
  }
  const [update] = await write(statements);
  return update?.changes === 1 ? { row: updated, notified: notify } : null;
}

/**
 * A PATCH that changes nothing answers the order as read. Read from a replica, that may
 * miss another node's write of the last second: then a guarded UPDATE that sets nothing
 * new confirms the order is still as read (null, read again, when it is not).
 */
async function confirmUnchanged(
  row: OrderRow,
  readsMayLag: boolean,
  write: (statements: Statement[]) => Promise<RunResult[]>,
): Promise<Outcome | null> {
  if (!readsMayLag) return { row, notified: false };
  const [confirmed] = await write([updateIfUnchanged(row, { updated_at: row.updated_at }, null)]);
  return confirmed?.changes === 1 ? { row, notified: false } : null;
}

const runInOrder = async (tx: Queryable, statements: Statement[]) => {
  const results: RunResult[] = [];
  for (const { sql, args } of statements) results.push(await tx.run(sql, args));
  return results;
};

/**
 * The change without holding the write lock while the order is read: one `batch`, which a
 * libSQL server commits together with other requests' (a PATCH in an interactive
 * transaction took four round trips under the lock). After `OPTIMISTIC_TRIES` lost races
 * the order is read and written inside one transaction, so a busy order's PATCH ends.
 */
export async function updateOrderRow(db: Db, update: Update): Promise<Outcome> {
  for (let tries = 1; ; tries++) {
    const outcome =
      tries <= OPTIMISTIC_TRIES
        ? await tryUpdate(db, (statements) => db.batch(statements), update, db.readsMayLag)
        : await db.transaction((tx) =>
            tryUpdate(tx, (statements) => runInOrder(tx, statements), update),
          );
    if (outcome) return outcome;
  }
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
    const store = c.get("store");
    const deps = c.get("deps");
    const { row, notified } = await updateOrderRow(c.get("db"), {
      store,
      deps,
      id: params.id,
      body,
    });
    if (notified) deps.onMailQueued(store.slug);
    return ok(c, { ...toOrder(row), customerNotified: notified });
  },
});
