import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KEYS, otherStore, send, tempDir, testStore } from "../helpers";
import { manage, newHostKey } from "../manage-support";
import { runCli, type ServerProcess, spawnServer } from "../process";
import { TEST_LIBSQL } from "../sqld";

/**
 * Another process holding a database's write lock (an operator's `sqlite3` session, a stuck
 * script): a write waits for it without stalling anything else, answers 503 if it is not
 * let go within 5 s, and the connection is as good as before once it is. Files, through
 * the `libsql` binding only: @libsql/client on a file (`STOREAPI_DRIVER=client`, a test
 * variant) waits in SQLite's busy handler, holding the thread.
 */
const SKIPPED = TEST_LIBSQL || process.env.STOREAPI_DRIVER === "client";

const dir = tempDir("storeapi-locked-");
const data = join(dir, "data");
let server: ServerProcess;
let hostKey: string;

beforeAll(async () => {
  if (SKIPPED) return;
  const fixture = join(dir, "fixture.json");
  writeFileSync(fixture, JSON.stringify({ stores: [testStore(), otherStore()] }));
  expect((await runCli(["load", fixture, "--data", data])).code).toBe(0);
  hostKey = await newHostKey(data);
  server = await spawnServer(data);
});

afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

/** Holds `file`'s write lock from this process until the returned function is called. */
function holdWriteLock(file: string): () => void {
  const db = new Database(file);
  db.run("BEGIN IMMEDIATE");
  return () => {
    db.run("ROLLBACK");
    db.close();
  };
}

const renameShop = (name: string) =>
  manage(server.url, "PATCH", "/stores/shop1", { key: hostKey, body: { name } });
const addProduct = (name: string) =>
  send(server.url, "/api/v1/products", { method: "POST", body: { name, price: 1 } });

/** The value as another connection finds it in the file: what was committed. */
const committed = (file: string, sql: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.query(sql).get();
  } finally {
    db.close();
  }
};

describe.skipIf(SKIPPED)("a database another process holds locked", () => {
  for (const [what, file, write, check] of [
    [
      "platform.db",
      () => join(data, "platform.db"),
      renameShop,
      () => committed(join(data, "platform.db"), "SELECT name FROM stores"),
    ],
    [
      "a store's file",
      () => join(data, "stores", "shop1.db"),
      addProduct,
      (name: string) =>
        committed(
          join(data, "stores", "shop1.db"),
          `SELECT name FROM products WHERE name = '${name}'`,
        ),
    ],
  ] as const) {
    test(`${what}: a write waits without stalling the server, is 503 after 5 s, and later writes commit`, async () => {
      const release = holdWriteLock(file());
      let released = false;
      try {
        const refused = write("During");
        // Answered while the write still waits: the wait does not hold the event loop.
        const first = await Promise.race([
          send(server.url, "/healthz").then((answer) => `healthz ${answer.status}`),
          refused.then(() => "write"),
        ]);
        expect(first).toBe("healthz 200");
        const answer = await refused;
        expect([answer.status, answer.json.error.code]).toEqual([503, "store_unavailable"]);
        // A write waiting when the lock goes is done.
        const waiting = write("Waited");
        await Bun.sleep(500);
        release();
        released = true;
        expect((await waiting).status).toBeLessThan(300);
      } finally {
        if (!released) release();
      }
      // Before, the write refused for the lock left its statement in progress, and every
      // later write on that connection joined a transaction that never committed.
      expect((await write("After")).status).toBeLessThan(300);
      expect(check("After")).toEqual({ name: "After" });
    });
  }

  test("writes queued behind one another each give up 5 s after they arrived, not one after another", async () => {
    const release = holdWriteLock(join(data, "stores", "shop1.db"));
    // Let go after 9 s: a write still waiting then (the second and third, when each waited
    // its 5 s only once the one before it gave up) would be done instead of refused.
    const releasing = Bun.sleep(9_000).then(release);
    const answers = await Promise.all(["q1", "q2", "q3"].map((name) => addProduct(name)));
    expect(answers.map((a) => a.status)).toEqual([503, 503, 503]);
    await releasing;
  });

  test("a store whose file another process holds in exclusive locking mode is 503 at its open, not 500", async () => {
    const holder = new Database(join(data, "stores", "shop2.db"));
    holder.run("PRAGMA locking_mode = EXCLUSIVE");
    holder.run("BEGIN EXCLUSIVE");
    holder.run("COMMIT"); // the lock stays until the connection closes
    try {
      const opening = send(server.url, "/api/v1/products", { host: "shop2.test", key: KEYS.other });
      // The open is tried again with the event loop free, not waited for in SQLite's busy handler.
      const first = await Promise.race([
        send(server.url, "/healthz").then((answer) => `healthz ${answer.status}`),
        opening.then(() => "store"),
      ]);
      expect(first).toBe("healthz 200");
      const answer = await opening;
      expect([answer.status, answer.json.error.code]).toEqual([503, "store_unavailable"]);
    } finally {
      holder.close();
    }
    const again = await send(server.url, "/api/v1/products", {
      host: "shop2.test",
      key: KEYS.other,
    });
    expect(again.status).toBe(200);
  });

  test("a store whose write was refused for the lock is deleted once the lock goes (200, not 500)", async () => {
    const release = holdWriteLock(join(data, "stores", "shop2.db"));
    try {
      const refused = await send(server.url, "/api/v1/products", {
        method: "POST",
        host: "shop2.test",
        key: KEYS.other,
        body: { name: "refused", price: 1 },
      });
      expect(refused.status).toBe(503);
    } finally {
      release();
    }
    const deleted = await manage(server.url, "DELETE", "/stores/shop2", { key: hostKey });
    expect(deleted.status).toBe(200);
  });

  test("a key created or deleted while platform.db is locked is 503 with nothing changed, and works once it goes", async () => {
    const keys = (method: string, path = "", body?: unknown) =>
      manage(server.url, method, `/stores/shop1/keys${path}`, { key: hostKey, body });
    const keyNames = async () =>
      ((await keys("GET")).json.data as Array<{ name: string; status: string }>).map(
        (key) => `${key.name} ${key.status}`,
      );
    const made = await keys("POST", "", { name: "ERP", permissions: { orders: "read" } });
    expect(made.status).toBe(201);
    const { id, key } = made.json.data as { id: number; key: string };
    const readOrders = async () => (await send(server.url, "/api/v1/orders", { key })).status;
    const before = await keyNames();

    const release = holdWriteLock(join(data, "platform.db"));
    try {
      const [created, deleted] = await Promise.all([
        keys("POST", "", { name: "Lost", permissions: { orders: "read" } }),
        keys("DELETE", `/${id}`),
      ]);
      expect([created.status, created.json.error.code]).toEqual([503, "store_unavailable"]);
      expect([deleted.status, deleted.json.error.code]).toEqual([503, "store_unavailable"]);
    } finally {
      release();
    }
    // Before, both were made in the store's file before platform.db refused the news: a key
    // nobody was given, and a deleted key this server went on accepting.
    expect(await keyNames()).toEqual(before);
    expect(await readOrders()).toBe(200);
    expect((await keys("DELETE", `/${id}`)).status).toBe(200);
    expect(await readOrders()).toBe(401);
  });

  test("reads go on while the store's file is locked", async () => {
    const release = holdWriteLock(join(data, "stores", "shop1.db"));
    try {
      expect((await send(server.url, "/api/v1/products", { key: KEYS.read })).status).toBe(200);
    } finally {
      release();
    }
  });
});
