import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asApiError } from "../errors";
import { ClientDb } from "./client";
import { DatabaseUnavailable, fileNamed, isStoreUnusable, NamespaceNotServed } from "./driver";

const dir = mkdtempSync(join(tmpdir(), "storeapi-client-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("every connection of a file client waits for another's write lock instead of failing at once", async () => {
  const path = join(dir, "store.db");
  const db = await new ClientDb(`file:${path}`).init();
  await db.exec("CREATE TABLE t (v INTEGER)");
  // The client opens connections as it needs them (one after each transaction, one per
  // overlapping read); a few of each, so that the writes below use ones opened late.
  await db.transaction((tx) => tx.run("INSERT INTO t VALUES (0)"));
  await Promise.all([db.all("SELECT * FROM t"), db.all("SELECT * FROM t"), db.all("SELECT 1")]);
  await db.transaction((tx) => tx.run("INSERT INTO t VALUES (0)"));

  // The lock is held by another process: a statement waiting for it blocks this thread.
  for (let i = 1; i <= 3; i++) {
    const holder = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const D = require("libsql"); const d = new D(${JSON.stringify(path)}); d.exec("BEGIN IMMEDIATE"); console.log("locked"); setTimeout(() => d.exec("COMMIT"), 300);`,
      ],
      { stdout: "pipe", cwd: import.meta.dir },
    );
    const reader = holder.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("locked\n");
    await db.run("INSERT INTO t VALUES (?)", [i]);
    expect(await holder.exited).toBe(0);
  }
  expect(await db.all("SELECT v FROM t ORDER BY rowid")).toEqual([
    { v: 0 },
    { v: 0 },
    { v: 1 },
    { v: 2 },
    { v: 3 },
  ]);
  await db.close();
});

test("batches that wait for the writer together are committed in one transaction; a failing one fails alone", async () => {
  const db = await new ClientDb(`file:${join(dir, "group.db")}`).init();
  await db.exec("CREATE TABLE t (v INTEGER UNIQUE)");
  const client = (db as unknown as { client: { batch: (...args: unknown[]) => unknown } }).client;
  const sent: number[] = [];
  const batch = client.batch.bind(client);
  client.batch = (...[statements, mode]: unknown[]) => {
    sent.push((statements as unknown[]).length);
    return batch(statements, mode);
  };

  const results = await Promise.all(
    [1, 2, 3].map((v) =>
      db.batch([
        { sql: "INSERT INTO t VALUES (?)", args: [v] },
        { sql: "UPDATE t SET v = v * 10 WHERE v = ?", args: [v] },
      ]),
    ),
  );
  expect(sent).toEqual([6]);
  expect(results.map((r) => r.map(({ changes }) => changes))).toEqual([
    [1, 1],
    [1, 1],
    [1, 1],
  ]);

  // 20 is taken: the second batch's INSERT fails, which rolls back the first and third
  // with it; alone, they go through.
  sent.length = 0;
  const settled = await Promise.allSettled([
    db.batch([{ sql: "INSERT INTO t VALUES (?)", args: [4] }]),
    db.batch([{ sql: "INSERT INTO t VALUES (?)", args: [20] }]),
    db.batch([{ sql: "INSERT INTO t VALUES (?)", args: [5] }]),
  ]);
  expect(sent).toEqual([3, 1, 1, 1]);
  expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(String((settled[1] as PromiseRejectedResult).reason)).toContain("UNIQUE");
  expect(await db.all("SELECT v FROM t ORDER BY v")).toEqual([
    { v: 4 },
    { v: 5 },
    { v: 10 },
    { v: 20 },
    { v: 30 },
  ]);
  await db.close();
});

test("a read after close is the store unavailable (503), not a server error", async () => {
  const db = await new ClientDb(`file:${join(dir, "closed.db")}`).init();
  await db.exec("CREATE TABLE t (v INTEGER)");
  await db.close();
  const refused = await db.get("SELECT 1").catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(DatabaseUnavailable);
  expect(asApiError(refused).code).toBe("store_unavailable");
});

// sqld, past --max-active-namespaces, answered a store's request with 404 now and then:
// the store API said 500 and `backup` "the libSQL server answered: SERVER_ERROR: …404".
test("a namespace the server answers 404 for is one store unavailable (503), named with the fix", async () => {
  const notFound = async () => new Response("", { status: 404 });
  const db = new ClientDb("http://127.0.0.1:9", { fetch: notFound as unknown as typeof fetch });
  const refused = await db.get("SELECT 1").catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(NamespaceNotServed);
  expect([isStoreUnusable(refused), asApiError(refused).code]).toEqual([true, "store_unavailable"]);
  const name = "namespace store-shop1 on http://127.0.0.1:9";
  expect((fileNamed(name, refused) as Error).message).toBe(
    `${name}: the libSQL server does not serve this database's namespace (HTTP 404): sqld answers so while --max-active-namespaces others are active (100 by default; start it with more than the number of stores)`,
  );
});

test("writes waiting behind one the server leaves unanswered give up with it, batches too", async () => {
  let asked = 0; // requests carrying SQL (closing a stream is one too)
  // A server that never answers: each request ends at its deadline, as namespaceFetch's do.
  const unanswered = async (request: Request) => {
    if ((await request.text()).includes('"sql"')) asked++;
    await Bun.sleep(100);
    throw new DOMException("The operation timed out.", "TimeoutError");
  };
  const db = new ClientDb("http://127.0.0.1:9", { fetch: unanswered });
  const gaveUp = "the libSQL server did not answer the writes before it";
  const outcome = (write: Promise<unknown>) =>
    write.then(
      () => "done",
      (error) => [error instanceof DatabaseUnavailable, (error as Error).message === gaveUp],
    );
  try {
    // A transaction left unanswered: a batch and a statement queued behind it give up.
    const first = outcome(db.transaction((tx) => tx.run("INSERT INTO t VALUES (1)")));
    const behind = [
      outcome(db.batch([{ sql: "INSERT INTO t VALUES (2)" }])),
      outcome(db.run("SELECT 1")),
    ];
    expect(await first).toEqual([true, false]);
    expect(await Promise.all(behind)).toEqual([
      [true, true],
      [true, true],
    ]);
    expect(asked).toBe(1);
    // A batch left unanswered: a transaction queued behind it gives up.
    const batch = outcome(db.batch([{ sql: "INSERT INTO t VALUES (3)" }]));
    const transaction = outcome(db.transaction((tx) => tx.run("INSERT INTO t VALUES (4)")));
    expect([await batch, await transaction]).toEqual([
      [true, false],
      [true, true],
    ]);
    expect(asked).toBe(2);
  } finally {
    await db.close();
  }
});
