import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asApiError } from "../errors";
import { DatabaseUnavailable } from "./driver";
import { NativeDb } from "./native";

const dir = mkdtempSync(join(tmpdir(), "storeapi-native-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a get after an all of the same SQL answers its own arguments (the binding alone would not)", async () => {
  const db = new NativeDb(join(dir, "a.db"));
  await db.exec(
    "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
  );
  const sql = "SELECT name FROM t WHERE id >= ? ORDER BY id";
  expect(await db.all(sql, [1])).toEqual([{ name: "one" }, { name: "two" }, { name: "three" }]);
  expect((await db.get<{ name: string }>(sql, [3]))?.name).toBe("three");
  expect(await db.all(sql, [2])).toEqual([{ name: "two" }, { name: "three" }]);
  expect((await db.get<{ name: string }>(sql, [1]))?.name).toBe("one");
  await db.close();
});

test("a cached statement's row is named as the binding names it: nulls, blobs, a repeated name, no row, no rows at all", async () => {
  const db = new NativeDb(join(dir, "rows.db"));
  await db.exec(
    "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, data BLOB); INSERT INTO t VALUES (1, NULL, x'0102'), (2, 'two', NULL)",
  );
  const queries: [string, unknown[]][] = [
    ["SELECT * FROM t WHERE id = ?", [1]],
    ["SELECT * FROM t WHERE id = ?", [2]],
    ["SELECT id, name AS id FROM t WHERE id = ?", [2]],
    ["SELECT count(*) AS n, max(id) AS top FROM t WHERE id > ?", [0]],
    ["SELECT * FROM t WHERE id = ?", [3]],
    ["UPDATE t SET name = name WHERE id = ?", [9]],
  ];
  const rows = () => Promise.all(queries.map(([sql, args]) => db.get(sql, args as [])));
  const expected: unknown[] = [
    { id: 1, name: null, data: Buffer.from([1, 2]) },
    { id: 2, name: "two", data: null },
    { id: "two" },
    { n: 2, top: 2 },
    undefined,
    undefined,
  ];
  // The first round is prepared uncached: the binding names the row (and adds its own
  // `_metadata`); from the third on the statements are cached and answer arrays.
  const uncached = await rows();
  for (const row of uncached) if (row) delete row._metadata;
  expect(uncached as unknown[]).toEqual(expected);
  await rows();
  expect((await rows()) as unknown[]).toEqual(expected);
  expect((await rows()) as unknown[]).toEqual(expected);
  await db.close();
});

test("a cached SELECT * names the columns a migration beside it added", async () => {
  const path = join(dir, "migrated.db");
  const db = new NativeDb(path);
  await db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1)");
  const read = () => db.get("SELECT * FROM t WHERE id = ?", [1]);
  for (let i = 0; i < 10; i++) await db.get(`SELECT ${i} AS n`); // past the uncached prepares
  expect(await read()).toEqual({ id: 1 });
  const other = new NativeDb(path);
  await other.exec("ALTER TABLE t ADD COLUMN note TEXT DEFAULT 'x'");
  await other.close();
  expect(await read()).toEqual({ id: 1, note: "x" });
  await db.close();
});

test("a run of a statement that answers rows leaves no statement in progress: a later transaction commits", async () => {
  const db = new NativeDb(join(dir, "pragma.db"));
  await db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)");
  await db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  await db.transaction((tx) => tx.run("INSERT INTO t VALUES (1)"));
  expect(await db.all("SELECT id FROM t")).toEqual([{ id: 1 }]);
  await db.close();
});

test("a batch is all or nothing: a failing statement rolls back the ones before it", async () => {
  const db = new NativeDb(join(dir, "b.db"));
  await db.exec("CREATE TABLE t (v INTEGER UNIQUE)");
  expect(
    await db.batch([
      { sql: "INSERT INTO t VALUES (?)", args: [1] },
      { sql: "UPDATE t SET v = 2 WHERE v = 9" },
    ]),
  ).toEqual([
    { changes: 1, lastInsertRowid: 1 },
    { changes: 0, lastInsertRowid: 1 },
  ]);
  const failing = db.batch([
    { sql: "INSERT INTO t VALUES (?)", args: [2] },
    { sql: "INSERT INTO t VALUES (?)", args: [1] },
  ]);
  await expect(failing).rejects.toThrow("UNIQUE");
  expect(await db.all("SELECT v FROM t")).toEqual([{ v: 1 }]);
  await db.batch([{ sql: "INSERT INTO t VALUES (?)", args: [3] }]);
  expect(await db.all("SELECT v FROM t ORDER BY v")).toEqual([{ v: 1 }, { v: 3 }]);
  await db.close();
});

test("a read or write after close is the store unavailable (503), not a server error", async () => {
  const db = new NativeDb(join(dir, "closed.db"));
  await db.exec("CREATE TABLE t (v INTEGER)");
  await db.close();
  for (const use of [() => db.get("SELECT 1"), () => db.run("INSERT INTO t VALUES (1)")]) {
    const refused = await use().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DatabaseUnavailable);
    expect(asApiError(refused).code).toBe("store_unavailable");
  }
});
