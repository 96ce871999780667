import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadFixture } from "../../src/load/load";
import { KEYS, send, tempDir, testStore } from "../helpers";
import { type ServerProcess, spawnServer } from "../process";
import { testLocation } from "../sqld";

/**
 * Acknowledged writes survive `kill -9`: clients stream PATCH /orders and POST
 * /customers at a real server process, it is killed mid-stream at a random moment,
 * restarted on the same data directory, and every 2xx must be there, whole.
 */

const CLIENTS = 4;
const ORDERS_PER_CLIENT = 25;
const ROUNDS = 3;

const orders = Array.from({ length: CLIENTS * ORDERS_PER_CLIENT }, (_, i) => ({
  id: i + 1,
  number: 1001 + i,
  status: 1,
  total: 100,
  customer: {
    id: null,
    name: "Dana Levi",
    email: `buyer${i + 1}@example.test`,
    phone: "",
    address: "",
  },
  createdAt: "2026-01-01T10:00:00+02:00",
}));

interface Ledger {
  /** Emails of customers whose create was acknowledged. */
  customers: Set<string>;
  /**
   * Per order, the tracking numbers it may hold: the last acknowledged one (null before
   * any) and every one sent after it without a 200, since a kill can cut off the answer
   * to a write that committed.
   */
  tracking: Map<number, Set<string | null>>;
}

const dataDir = tempDir("storeapi-durability-");
const mailDir = join(dataDir, "mail-out");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function client(
  server: ServerProcess,
  id: number,
  round: number,
  ledger: Ledger,
  stop: { now: boolean },
) {
  for (let i = 0; !stop.now; i++) {
    const orderId = id * ORDERS_PER_CLIENT + (i % ORDERS_PER_CLIENT) + 1;
    const tracking = `T${round}-${id}-${i}`;
    const possible = ledger.tracking.get(orderId) ?? new Set([null]);
    ledger.tracking.set(orderId, possible.add(tracking));
    try {
      const patched = await send(server.url, `/api/v1/orders/${orderId}`, {
        method: "PATCH",
        body: { status: 3, trackingNumber: tracking, notifyCustomer: true },
      });
      if (patched.status === 200) ledger.tracking.set(orderId, new Set([tracking]));
      const email = `c${round}-${id}-${i}@example.test`;
      const created = await send(server.url, "/api/v1/customers", {
        method: "POST",
        body: { email, firstName: "Noa" },
        headers: { "Idempotency-Key": `dur-${email}` },
      });
      if (created.status === 201) ledger.customers.add(email);
    } catch {
      return; // connection cut by the kill
    }
  }
}

async function readStore() {
  const db = await (await testLocation(dataDir)).openStore("shop1");
  try {
    return {
      orders: await db.all<{ id: number; status_id: number; tracking_number: string | null }>(
        "SELECT id, status_id, tracking_number FROM orders",
      ),
      emails: new Set(
        (await db.all<{ email: string }>("SELECT email FROM customers")).map((r) => r.email),
      ),
      statusMails: (await db.get<{ n: number }>(
        "SELECT count(*) AS n FROM outbox WHERE kind = 'order_status'",
      )) as { n: number },
      outbox: await db.all<{ status: string; n: number }>(
        "SELECT status, count(*) AS n FROM outbox GROUP BY status",
      ),
    };
  } finally {
    await db.close();
  }
}

describe("durability under kill -9", () => {
  test("every acknowledged write is there after restarts, nothing half-written, mail delivered", async () => {
    await loadFixture(await testLocation(dataDir), { stores: [testStore({ orders })] });
    const ledger: Ledger = { customers: new Set(), tracking: new Map() };
    for (let round = 1; round <= ROUNDS; round++) {
      const server = await spawnServer(dataDir, ["--mail-dir", mailDir, "--rate-limit", "1000000"]);
      const stop = { now: false };
      const running = Array.from({ length: CLIENTS }, (_, id) =>
        client(server, id, round, ledger, stop),
      );
      // Killed at a random moment after this round's first acknowledged create (a slow
      // machine or a libSQL server must not leave a round with nothing to check).
      const before = ledger.customers.size;
      for (let i = 0; i < 200 && ledger.customers.size === before; i++) await Bun.sleep(50);
      await Bun.sleep(Math.floor(Math.random() * 500));
      await server.signal("SIGKILL");
      stop.now = true;
      await Promise.all(running);
    }
    expect(ledger.customers.size).toBeGreaterThan(0);

    // The last start delivers the mail the killed servers left queued.
    const server = await spawnServer(dataDir, ["--mail-dir", mailDir, "--rate-limit", "1000000"]);
    for (const email of ledger.customers) {
      const answer = await send(
        server.url,
        `/api/v1/customers?email=${encodeURIComponent(email)}`,
        { key: KEYS.read },
      );
      expect(answer.json.data.map((c: { email: string }) => c.email)).toEqual([email]);
    }
    const deadline = Date.now() + 20_000;
    const queued = async () => (await readStore()).outbox.some((r) => r.status === "queued");
    while (Date.now() < deadline && (await queued())) await Bun.sleep(100);
    // Should mail stay queued, the server's own words about it say why.
    const mailLog = server
      .stdout()
      .split("\n")
      .filter((line) => line.includes('"msg":"mail'))
      .join("\n");
    expect(await queued(), `mail still queued after 20 s; the server's mail log:\n${mailLog}`).toBe(
      false,
    );
    expect(await server.signal("SIGTERM")).toBe(0);

    const stored = await readStore();
    for (const [orderId, possible] of ledger.tracking) {
      const row = stored.orders.find((o) => o.id === orderId);
      expect([...possible]).toContain(row?.tracking_number ?? null);
    }
    // Status and tracking number change in one transaction with the status email.
    const shipped = stored.orders.filter((o) => o.status_id === 3);
    expect(stored.orders.filter((o) => o.tracking_number !== null && o.status_id !== 3)).toEqual(
      [],
    );
    expect(stored.statusMails.n).toBe(shipped.length);
    expect(stored.outbox.filter((r) => r.status !== "sent")).toEqual([]);
    const files = readdirSync(mailDir).filter((f) => f.endsWith(".eml"));
    expect(files.length).toBe(stored.outbox.reduce((n, r) => n + r.n, 0));
  }, 120_000);
});
