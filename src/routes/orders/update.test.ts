import { afterAll, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppDeps } from "../../app";
import type { Db } from "../../db/driver";
import { storeMigrations } from "../../db/migrations";
import { openDb } from "../../db/open";
import type { Store } from "../../db/platform";
import type { OrderRow } from "./row";
import { type Update, updateOrderRow } from "./update";

/** The optimistic write of PATCH /orders/{id} when another write of the order lands between its read and its write. */

const dir = mkdtempSync(join(tmpdir(), "storeapi-order-update-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const store = {
  slug: "shop",
  name: "Shop",
  settings: { notifyStatusChange: true },
} as Store;
const NOW = 1_800_000_000_000;
const deps = { now: () => NOW, beforeMailQueued: async () => {} } as unknown as AppDeps;
const shipped: Update = {
  store,
  deps,
  id: 1,
  body: { status: 3, notifyCustomer: true },
};

let db: Db;
let path = 0;
beforeEach(async () => {
  db = await openDb(`file:${join(dir, `${++path}.db`)}`, storeMigrations);
  await db.exec(`INSERT INTO order_statuses VALUES (1, 'New'), (3, 'Shipped');
    INSERT INTO orders (id, number, status_id, customer_email, created_at) VALUES (1, 1001, 1, 'b@example.test', 0)`);
});

/** `db`, whose first `races` batches each find the order changed by `competing` since it was read. */
function racing(races: number, competing: string, readsMayLag = false) {
  let batches = 0;
  const raced: Db = Object.create(db, { readsMayLag: { value: readsMayLag } });
  raced.batch = async (statements) => {
    if (++batches <= races) await db.run(competing, [batches]);
    return db.batch(statements);
  };
  return { raced, batches: () => batches };
}

const mails = async () =>
  (await db.all<{ kind: string; subject: string }>("SELECT kind, subject FROM outbox")).map(
    ({ kind, subject }) => ({ kind, subject }),
  );
async function order() {
  const row = await db.get<OrderRow>("SELECT * FROM orders WHERE id = 1");
  return (
    row && { status_id: row.status_id, admin_notes: row.admin_notes, updated_at: row.updated_at }
  );
}

test("a lost race reads the order again and writes the change over the other write", async () => {
  const { raced, batches } = racing(
    1,
    "UPDATE orders SET admin_notes = 'other ' || CAST(? AS INTEGER) WHERE id = 1",
  );
  const { row, notified } = await updateOrderRow(raced, shipped);
  expect(batches()).toBe(2);
  expect([row.status_id, row.admin_notes, row.updated_at, notified]).toEqual([
    3,
    "other 1",
    NOW,
    true,
  ]);
  expect(await order()).toEqual({ status_id: 3, admin_notes: "other 1", updated_at: NOW });
  expect(await mails()).toEqual([{ kind: "order_status", subject: "Order #1001: Shipped" }]);
});

test("the other write made the same change: no email, though the first try's batch carried one", async () => {
  const { raced } = racing(1, "UPDATE orders SET status_id = 3, updated_at = ? WHERE id = 1");
  const { row, notified } = await updateOrderRow(raced, shipped);
  expect([row.status_id, row.updated_at, notified]).toEqual([3, 1, false]);
  expect(await mails()).toEqual([]);
});

test("after three lost races the order is read and written under the write lock", async () => {
  const { raced, batches } = racing(
    Number.POSITIVE_INFINITY,
    "UPDATE orders SET admin_notes = 'other ' || CAST(? AS INTEGER) WHERE id = 1",
  );
  const { row, notified } = await updateOrderRow(raced, shipped);
  expect(batches()).toBe(3);
  expect([row.status_id, row.admin_notes, notified]).toEqual([3, "other 3", true]);
  expect(await order()).toEqual({ status_id: 3, admin_notes: "other 3", updated_at: NOW });
  expect((await mails()).length).toBe(1);
});

test("the host replaced the statuses in between: a status renamed is answered and mailed by its new name", async () => {
  const { row, notified } = await updateOrderRow(
    racing(1, "UPDATE order_statuses SET name = 'Sent ' || CAST(? AS INTEGER) WHERE id = 3").raced,
    shipped,
  );
  expect([row.status_id, row.status_name, notified]).toEqual([3, "Sent 1", true]);
  expect(await mails()).toEqual([{ kind: "order_status", subject: "Order #1001: Sent 1" }]);
});

test("the host replaced the statuses in between: a status removed is 400 invalid_field, and nothing is written", async () => {
  const { raced } = racing(1, "DELETE FROM order_statuses WHERE id = 3 AND ? > 0");
  const refused = updateOrderRow(raced, shipped);
  await expect(refused).rejects.toMatchObject({
    code: "invalid_field",
    message: 'Field "status" must be one of this store\'s status ids: 1.',
  });
  expect(await order()).toEqual({ status_id: 1, admin_notes: null, updated_at: null });
  expect(await mails()).toEqual([]);
});

test("read from a replica, a PATCH that changes nothing confirms it: another node's write of the last second is not lost", async () => {
  const stillNew: Update = { ...shipped, body: { status: 1, notifyCustomer: false } };
  const quiet = racing(0, "", true);
  const unchanged = await updateOrderRow(quiet.raced, stillNew);
  expect([quiet.batches(), unchanged.row.status_id, unchanged.notified]).toEqual([1, 1, false]);
  expect(await order()).toEqual({ status_id: 1, admin_notes: null, updated_at: null });

  // The other node set status 3 just before: this PATCH's status 1 is written over it.
  const { raced, batches } = racing(
    1,
    "UPDATE orders SET status_id = 3, updated_at = ? WHERE id = 1",
    true,
  );
  const { row } = await updateOrderRow(raced, stillNew);
  expect([batches(), row.status_id, row.updated_at]).toEqual([2, 1, NOW]);
  expect(await order()).toEqual({ status_id: 1, admin_notes: null, updated_at: NOW });
});

test("read from the database itself, a PATCH that changes nothing writes nothing", async () => {
  const { raced, batches } = racing(1, "UPDATE orders SET status_id = 3 WHERE id = 1 AND ? > 0");
  const { row } = await updateOrderRow(raced, {
    ...shipped,
    body: { status: 1, notifyCustomer: false },
  });
  expect([batches(), row.status_id]).toEqual([0, 1]);
});
