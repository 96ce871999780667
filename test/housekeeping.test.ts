import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import type { Queryable } from "../src/db/driver";
import { IDEMPOTENCY_TTL_MS } from "../src/db/idempotency";
import { NativeDb } from "../src/db/native";
import { StorePool, storeDbPath } from "../src/db/pool";
import { Housekeeper, purgeStore } from "../src/housekeeping";
import { loadFixture } from "../src/load/load";
import { Logger } from "../src/log";
import type { StoreRegistry } from "../src/registry";
import { otherStore, tempDir, testStore } from "./helpers";
import { runCli, spawnServer } from "./process";
import { TEST_LIBSQL } from "./sqld";

const dir = tempDir("storeapi-housekeeping-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DAY = 24 * 60 * 60 * 1000;

/** Outbox rows (subject = what should happen to it) and idempotency records, dated relative to now. */
function seed(path: string, now: number): void {
  const db = new Database(path);
  const mail = db.prepare(
    "INSERT INTO outbox (kind, recipient, subject, text, html, status, attempts, next_attempt_at, created_at, sent_at) VALUES ('order_status', 'c@x.test', ?, '', '', ?, 1, 0, ?, ?)",
  );
  mail.run("purge: sent 31 days ago", "sent", now - 31 * DAY, now - 31 * DAY);
  mail.run("keep: sent 29 days ago", "sent", now - 29 * DAY, now - 29 * DAY);
  mail.run("keep: queued 40 days ago", "queued", now - 40 * DAY, null);
  mail.run("keep: failed 40 days ago", "failed", now - 40 * DAY, null);
  const record = db.prepare(
    "INSERT INTO idempotency (key_id, idem_key, fingerprint, status, body, created_at) VALUES (1, ?, 'f', 201, '{}', ?)",
  );
  for (let i = 0; i < 5; i++) record.run(`purge-${i}`, now - DAY - 60_000);
  record.run("keep", now - 60 * 60 * 1000);
  const key = db.prepare(
    "INSERT INTO api_keys (name, digest, hint, permissions, created_at, expires_at, deleted_at) VALUES (?, ?, 'h', '{}', ?, ?, ?)",
  );
  const ended = [
    ["purge: deleted 91 days ago", null, now - 91 * DAY],
    ["purge: expired 91 days ago", now - 91 * DAY, null],
    ["keep: deleted 89 days ago", null, now - 89 * DAY],
    ["keep: expires in a day", now + DAY, null],
    ["keep: the newest, deleted 100 days ago", null, now - 100 * DAY], // its id is never reused
  ] as const;
  for (const [name, expiresAt, deletedAt] of ended)
    key.run(name, `digest ${name}`, now - 200 * DAY, expiresAt, deletedAt);
  db.close();
}

function remaining(path: string) {
  const db = new Database(path, { readonly: true });
  const subjects = (
    db.prepare("SELECT subject FROM outbox ORDER BY id").all() as { subject: string }[]
  ).map((r) => r.subject);
  const keys = (
    db.prepare("SELECT idem_key FROM idempotency ORDER BY idem_key").all() as { idem_key: string }[]
  ).map((r) => r.idem_key);
  const apiKeys = (
    db
      .prepare(
        "SELECT name FROM api_keys WHERE name LIKE 'keep:%' OR name LIKE 'purge:%' ORDER BY id",
      )
      .all() as { name: string }[]
  ).map((r) => r.name);
  db.close();
  return { subjects, keys, apiKeys };
}

/** The ids of the named keys, in the order named. */
function keyIds(path: string, names: string[]): number[] {
  const db = new Database(path, { readonly: true });
  const id = db.prepare("SELECT id FROM api_keys WHERE name = ?");
  const ids = names.map((name) => (id.get(name) as { id: number }).id);
  db.close();
  return ids;
}

const KEPT = {
  subjects: ["keep: sent 29 days ago", "keep: queued 40 days ago", "keep: failed 40 days ago"],
  keys: ["keep"],
  apiKeys: [
    "keep: deleted 89 days ago",
    "keep: expires in a day",
    "keep: the newest, deleted 100 days ago",
  ],
};

// Seeds rows by writing the store file directly.
test.skipIf(TEST_LIBSQL)(
  "purgeStore deletes old sent mail, expired idempotency records and long-ended keys in batches of the given size",
  async () => {
    const data = join(dir, "unit");
    await loadFixture(data, { stores: [testStore()] });
    const path = storeDbPath(data, "shop1");
    const now = Date.now();
    seed(path, now);
    const ids = keyIds(path, ["purge: deleted 91 days ago", "purge: expired 91 days ago"]);
    const db = new NativeDb(path);
    const deletes: string[] = [];
    const counting: Queryable = {
      all: (sql, args) => db.all(sql, args),
      get: (sql, args) => db.get(sql, args),
      run: (sql, args) => {
        deletes.push(sql.split(" ")[2]); // DELETE FROM <table>
        return db.run(sql, args);
      },
    };
    const purged = await purgeStore(
      counting,
      { keepSentMailDays: 30, batch: 2, everyMinutes: 60 },
      now,
    );
    await db.close();
    expect(purged).toEqual({ sentMail: 1, idempotency: 5, endedKeys: 2, endedKeyIds: ids });
    // 1 sent mail: one batch; 5 records in batches of 2: 2 + 2 + 1; 2 keys: 2 + 0.
    expect(deletes).toEqual([
      "outbox",
      "idempotency",
      "idempotency",
      "idempotency",
      "api_keys",
      "api_keys",
    ]);
    expect(remaining(path)).toEqual(KEPT);
  },
);

/** Starts a server on `data` and stops it once its log has a line with `msg` (or after ~10 s). */
async function serveUntil(data: string, msg: string, flags: string[] = []): Promise<string> {
  const server = await spawnServer(data, [
    "--purge-batch",
    "2",
    "--keep-sent-mail-days",
    "30",
    ...flags,
  ]);
  try {
    for (let i = 0; i < 100 && !server.stdout().includes(msg); i++) await Bun.sleep(100);
  } finally {
    expect(await server.signal("SIGTERM")).toBe(0);
  }
  return server.stdout();
}

// Seeds rows and markers by writing the files directly.
test.skipIf(TEST_LIBSQL)(
  "a server's first sweep purges the stores due, opens no other, and says how many",
  async () => {
    const data = join(dir, "served");
    await loadFixture(data, { stores: [testStore(), otherStore()] });
    seed(storeDbPath(data, "shop1"), Date.now());
    seed(storeDbPath(data, "shop2"), Date.now());
    const [purgedKey, keptKey] = keyIds(storeDbPath(data, "shop1"), [
      "purge: deleted 91 days ago",
      "keep: deleted 89 days ago",
    ]);
    const platform = new Database(join(data, "platform.db"));
    platform.exec(
      `DELETE FROM purge_due; INSERT INTO purge_due (slug, due_at) VALUES ('shop1', 0);
       INSERT INTO key_usage (slug, key_id, used_at) VALUES
         ('shop1', ${purgedKey}, 1), ('shop1', ${keptKey}, 2), ('shop2', ${purgedKey}, 3)`,
    );
    platform.close();
    const log = await serveUntil(data, "housekeeping: purged");
    const line = log.split("\n").find((l) => l.includes("housekeeping: purged")) ?? "{}";
    expect(JSON.parse(line)).toMatchObject({
      msg: "housekeeping: purged",
      sentMail: 1,
      idempotency: 5,
      endedKeys: 2,
    });
    expect(remaining(storeDbPath(data, "shop1"))).toEqual(KEPT);
    // shop2 was not due: its rows wait for its next use or due time.
    expect(remaining(storeDbPath(data, "shop2")).keys).toHaveLength(6);
    // The deleted key's last use goes with it; other keys' and stores' stay.
    const usage = new Database(join(data, "platform.db"), { readonly: true });
    expect(
      usage.prepare("SELECT slug, key_id, used_at FROM key_usage ORDER BY used_at").all(),
    ).toEqual([
      { slug: "shop1", key_id: keptKey, used_at: 2 },
      { slug: "shop2", key_id: purgedKey, used_at: 3 },
    ]);
    usage.close();
  },
);

test.skipIf(TEST_LIBSQL)(
  "a sweep records when a store's kept rows expire and opens no idle store",
  async () => {
    const data = join(dir, "due");
    await loadFixture(data, { stores: [testStore(), otherStore()] });
    const now = Date.now();
    const pool = new StorePool(data, 16);
    const dues = new Map<string, number | null>();
    const housekeeper = new Housekeeper(
      {
        pool,
        registry: { get: (slug: string) => ({ slug }) } as unknown as StoreRegistry,
        platform: {
          storesDueForPurge: async () => [],
          forgetKeyUses: async () => {},
          setPurgeDue: async (next) => {
            for (const [slug, at] of next) dues.set(slug, at);
          },
        },
        logger: new Logger("silent"),
        now: () => now,
      },
      { keepSentMailDays: 30, batch: 500, everyMinutes: 60 },
    );
    seed(storeDbPath(data, "shop1"), now);
    await pool.use("shop1", async () => {});
    housekeeper.start();
    for (let i = 0; i < 500 && dues.size === 0; i++) await Bun.sleep(20);
    await housekeeper.stop();
    await pool.close();
    expect(pool.misses).toBe(1); // the request's open of shop1; shop2 was never opened
    // What is left on shop1 expires first with the "keep" record, created an hour ago.
    expect(dues).toEqual(new Map([["shop1", now - 60 * 60 * 1000 + IDEMPOTENCY_TTL_MS]]));
  },
);

test("the housekeeping flags take positive whole numbers", async () => {
  const serve = (...flags: string[]) => runCli(["serve", "--data", join(dir, "flags"), ...flags]);
  const run = await serve("--purge-batch", "0", "--keep-sent-mail-days", "x");
  expect(run.code).toBe(2);
  expect(run.stderr).toBe(
    'storeapi: --keep-sent-mail-days must be a positive whole number, not "x"; --purge-batch must be a positive whole number, not "0"\n',
  );
  // A sweep interval past a timer's 2^31 - 1 ms would have run every millisecond.
  const tooLong = await serve("--purge-every-minutes", "100000", "--keep-sent-mail-days", "36501");
  expect(tooLong.code).toBe(2);
  expect(tooLong.stderr).toBe(
    "storeapi: --keep-sent-mail-days must be at most 36500, not 36501; --purge-every-minutes must be at most 10080, not 100000\n",
  );
});
