import { afterEach, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { FileLocation } from "../src/db/location";
import { StorePool, storeDbPath } from "../src/db/pool";
import { until } from "./helpers";

const dirs: string[] = [];
const pools: StorePool[] = [];
// Pools first (also after a failed test): a running checkpoint worker would write again.
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Rows of `products` in the database file alone, without its WAL: what checkpoints moved there. */
function rowsInMainFile(dir: string, slug: string): number {
  const copy = join(dir, `${slug}-copy.db`);
  copyFileSync(storeDbPath(dir, slug), copy);
  const db = new Database(copy);
  try {
    return (db.prepare("SELECT count(*) AS n FROM products").get() as { n: number }).n;
  } catch {
    return -1; // the schema itself is not in the file yet
  } finally {
    db.close();
    rmSync(copy, { force: true });
  }
}

/**
 * A pool over a new directory holding empty stores `slugs` (a pool opens only stores that
 * exist): the first made by `stores add`'s code, the others copies of it.
 */
async function poolOfStores(prefix: string, slugs: string[], maxOpen?: number): Promise<StorePool> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  await new FileLocation(dir).createStore(slugs[0]);
  for (const slug of slugs.slice(1))
    copyFileSync(storeDbPath(dir, slugs[0]), storeDbPath(dir, slug));
  const pool = new StorePool(dir, maxOpen);
  pools.push(pool);
  return pool;
}

describe("checkpoints on the worker thread", () => {
  test("writes through the pool reach the database file, and close stops the worker", async () => {
    const pool = await poolOfStores("storeapi-ckpt-", ["shop1"]);
    const dir = (pool.location as FileLocation).dataDir;
    pool.startCheckpoints(25);
    await pool.use("shop1", async (db) => {
      await db.transaction(async (tx) => {
        for (let i = 1; i <= 200; i++) {
          await tx.run(
            "INSERT INTO products (name, price, created_at, updated_at) VALUES (?, ?, ?, ?)",
            [`p${i}`, 100, i, i],
          );
        }
      });
    });
    expect(await until(() => rowsInMainFile(dir, "shop1") === 200)).toBe(true);
    await pool.use("shop1", (db) => db.run("DELETE FROM products WHERE id > 150"));
    expect(await until(() => rowsInMainFile(dir, "shop1") === 150)).toBe(true);
    await pool.close();
  });

  test("a database the pool closes keeps its writes while the others are checkpointed", async () => {
    const pool = await poolOfStores("storeapi-ckpt-", ["a", "b"], 1);
    const dir = (pool.location as FileLocation).dataDir;
    pool.startCheckpoints(25);
    await pool.use("a", (db) =>
      db.run("INSERT INTO products (name, price, created_at, updated_at) VALUES ('x', 1, 1, 1)"),
    );
    await pool.use("b", (db) =>
      db.run("INSERT INTO products (name, price, created_at, updated_at) VALUES ('y', 1, 1, 1)"),
    );
    expect(await until(() => rowsInMainFile(dir, "b") === 1)).toBe(true);
    expect(pool.openCount).toBe(1);
    expect(rowsInMainFile(dir, "a")).toBe(1);
    await pool.close();
  });
});

describe("closing databases", () => {
  const openFiles = () => readdirSync("/proc/self/fd").length;

  test.skipIf(!existsSync("/proc/self/fd"))(
    "cycling through many stores does not pile up open files",
    async () => {
      const slugs = Array.from({ length: 300 }, (_, i) => `s${i}`);
      const pool = await poolOfStores("storeapi-fds-", slugs, 4);
      const before = openFiles();
      for (const slug of slugs) {
        await pool.use(slug, (db) => db.get("SELECT count(*) AS n FROM outbox"));
      }
      await Bun.sleep(10);
      // 296 closes: a full collection whenever 8 (2 × maxOpen) closed connections wait for one.
      // 300 stores × 3 files would be 900 if none were freed. The pool counts only the
      // `libsql` binding's own connections: with @libsql/client (STOREAPI_DRIVER=client, a
      // test variant) the files go whenever Bun collects, which a loaded machine may put off.
      const collect = process.env.STOREAPI_DRIVER === "client" ? () => Bun.gc(true) : () => {};
      const freed = await until(() => {
        collect();
        return openFiles() - before < 100;
      });
      expect(freed).toBe(true);
      await pool.close();
    },
    60_000,
  );
});
