import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KEYS, send, tempDir, testStore } from "../helpers";
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
  writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
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

  test("reads go on while the store's file is locked", async () => {
    const release = holdWriteLock(join(data, "stores", "shop1.db"));
    try {
      expect((await send(server.url, "/api/v1/products", { key: KEYS.read })).status).toBe(200);
    } finally {
      release();
    }
  });
});
