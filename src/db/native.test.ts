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
