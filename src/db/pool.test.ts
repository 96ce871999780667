import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClientClosed } from "../errors";
import { runtime, useRuntime } from "../runtime/runtime";
import { DatabaseUnavailable, type Db } from "./driver";
import type { Location } from "./location";
import { NativeDb, unreleasedConnections } from "./native";
import { defaultMaxOpenStores, maxOpenStoresFitting, StorePool } from "./pool";

/**
 * A location whose opens are recorded and whose databases do nothing; each open also
 * queues other work on the event loop (as a request arriving meanwhile would be),
 * recorded when it runs.
 */
function recordingLocation(events: string[]): Location {
  const db = { close: async () => void events.push("close") } as unknown as Db;
  return {
    describe: "memory",
    remote: false,
    descriptorsPerStore: 4,
    openPlatform: async () => db,
    openStore: async (slug) => {
      events.push(`open ${slug}`);
      setImmediate(() => events.push(`work queued during ${slug}`));
      return db;
    },
    createStore: async () => {},
    deleteStore: async () => {},
    storeExists: async () => true,
    missingStores: async () => [],
    changeStores: (_wait, _busy, change) => change(),
    storeMissing: (slug) => new DatabaseUnavailable(slug),
    storeName: (slug) => slug,
    platformName: "platform",
  };
}

test("cold stores open one at a time, each after the event loop has had a turn", async () => {
  const events: string[] = [];
  const pool = new StorePool(recordingLocation(events), 16);
  await Promise.all([pool.acquire("a"), pool.acquire("b")]);
  await Bun.sleep(1);
  expect(events).toEqual(["open a", "work queued during a", "open b", "work queued during b"]);
  expect(pool.misses).toBe(2);
});

test("background use of a closed store closes it again; a store in use stays open", async () => {
  const events: string[] = [];
  const pool = new StorePool(recordingLocation(events), 16);
  await pool.use("in-use", async () => {});
  await pool.use("swept", async () => {}, { background: true });
  await pool.use("in-use", async () => {}, { background: true });
  expect(pool.openSlugs()).toEqual(["in-use"]);
  expect([...pool.takeUsed()]).toEqual(["in-use"]);
});

test("a queued open is skipped when every client waiting for it has hung up", async () => {
  const events: string[] = [];
  const pool = new StorePool(recordingLocation(events), 16);
  const busy = pool.acquire("busy");
  const gone = new AbortController();
  const abandoned = pool.acquire("abandoned", { hungUp: gone.signal });
  const stillWanted = new AbortController();
  const shared = [
    pool.acquire("shared", { hungUp: stillWanted.signal }),
    pool.acquire("shared", { hungUp: gone.signal }),
  ];
  gone.abort();
  await expect(abandoned).rejects.toBeInstanceOf(ClientClosed);
  await Promise.all([busy, ...shared]);
  expect(events.filter((event) => event.startsWith("open"))).toEqual(["open busy", "open shared"]);
  expect(pool.openSlugs()).toEqual(["busy", "shared"]);
});

test("closing a store waits for the request holding it", async () => {
  const events: string[] = [];
  const pool = new StorePool(recordingLocation(events), 16);
  const lease = await pool.acquire("deleted");
  const closed = pool.closeStore("deleted").then(() => events.push("closed"));
  await Bun.sleep(20);
  events.push("request done");
  lease.release();
  await closed;
  expect(events).toEqual([
    "open deleted",
    "work queued during deleted",
    "request done",
    "close",
    "closed",
  ]);
  expect(pool.openSlugs()).toEqual([]);
});

test("the default pool gives half the open-files limit (past 1,024 kept) to stores, at most 2,048", () => {
  expect(defaultMaxOpenStores(1024)).toBe(16);
  expect(defaultMaxOpenStores(4096)).toBe(384);
  expect(defaultMaxOpenStores(20_000)).toBe(2048);
  // A replica holds ten files per store (LibsqlLocation.descriptorsPerStore).
  expect(defaultMaxOpenStores(20_000, 10)).toBe(948);
});

test("the stores an open-files limit holds: after 1,024 kept and a closed connection waiting per store, at most 512", () => {
  expect(maxOpenStoresFitting(2048, 4)).toBe(146);
  expect(maxOpenStoresFitting(4096, 4)).toBe(438);
  expect(maxOpenStoresFitting(20_000, 4)).toBe(4_360);
  for (const limit of [2048, 4096, 20_000])
    expect(defaultMaxOpenStores(limit)).toBeLessThanOrEqual(maxOpenStoresFitting(limit, 4));
  expect(maxOpenStoresFitting(1024, 4)).toBe(0);
  expect(maxOpenStoresFitting(1024, 0)).toBe(Number.POSITIVE_INFINITY);
});

test("while a closed store's file is moved, nothing opens it; afterwards it opens again", async () => {
  const events: string[] = [];
  const pool = new StorePool(recordingLocation(events), 16);
  (await pool.acquire("moved")).release();
  let openedMeanwhile: unknown;
  await pool.closeStore("moved", async () => {
    openedMeanwhile = await pool.acquire("moved", { background: true }).catch((error) => error);
    events.push("moved");
  });
  expect(openedMeanwhile).toBeInstanceOf(DatabaseUnavailable);
  expect((openedMeanwhile as Error).message).toBe("moved is being moved");
  (await pool.acquire("moved")).release();
  expect(events.filter((event) => !event.startsWith("work"))).toEqual([
    "open moved",
    "close",
    "moved",
    "open moved",
  ]);
});

test("closed connections a young collection left behind ask for a full one before descriptors run short", async () => {
  const dir = mkdtempSync(join(tmpdir(), "storeapi-pool-gc-"));
  const real = runtime();
  const asked: string[] = [];
  // Collections that free nothing: every closed connection stays waiting, as ones whose
  // statements a collection promoted while they were open do.
  useRuntime({
    ...real,
    collectGarbage: () => void asked.push("full"),
    collectYoungGarbage: () => void asked.push("young"),
  });
  const location: Location = {
    ...recordingLocation([]),
    openStore: async (slug) => new NativeDb(join(dir, `${slug}.db`)),
  };
  try {
    // What earlier tests in this process closed, once the collector has had its turn.
    real.collectGarbage();
    await Bun.sleep(10);
    const waitingBefore = unreleasedConnections().all;
    // Half the open-files limit for closed connections waiting, 3 each: 4 more may wait.
    const pool = new StorePool(location, 1, (waitingBefore + 4) * 6);
    for (let i = 0; i < 8; i++) {
      await pool.use(`s${i}`, (db) => db.get("SELECT 1"));
      await Bun.sleep(5); // the close, then the collection it asks for on a timer
    }
    await pool.close();
    // Only that a full one is asked for: a pool an earlier test left open may ask for
    // collections meanwhile (the runtime is the process's), so the order is not this pool's.
    expect(asked).toContain("full");
  } finally {
    useRuntime(real);
    rmSync(dir, { recursive: true, force: true });
  }
});
