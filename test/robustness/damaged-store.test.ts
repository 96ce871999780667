import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KEYS, otherStore, send, tempDir, testStore, until } from "../helpers";
import { manage, newHostKey } from "../manage-support";
import { runCli, type ServerProcess, spawnServer } from "../process";
import { TEST_LIBSQL } from "../sqld";

/**
 * One store's database file damaged on disk (a bad sector, a botched copy), or one SQLite
 * cannot open at all: that store answers 503 `store_unavailable`, the others go on, and
 * the log and every command name the file to restore. Files only (a libSQL server keeps
 * its own files).
 */

const UNAVAILABLE = {
  ok: false,
  error: {
    code: "store_unavailable",
    message: "This store is unavailable right now; try again later.",
  },
};

/**
 * Makes the root pages of one table and its indexes noise and nothing else: the file opens
 * and other requests are answered; a statement that reads that table meets the damage.
 */
function scrambleTable(path: string, table: string): void {
  const db = new Database(path);
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  const roots = db
    .query("SELECT rootpage FROM sqlite_master WHERE tbl_name = ? AND rootpage > 0")
    .all(table) as { rootpage: number }[];
  const pageSize = (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
  db.close();
  const file = readFileSync(path);
  for (const { rootpage } of roots) randomBytes(pageSize).copy(file, (rootpage - 1) * pageSize);
  writeFileSync(path, file);
}

/** Keeps the file's first page (the header and the schema) and makes every other page noise. */
function scramblePages(path: string): void {
  const file = readFileSync(path);
  const pageSize = file.readUInt16BE(16);
  writeFileSync(
    path,
    Buffer.concat([file.subarray(0, pageSize), randomBytes(file.length - pageSize)]),
  );
}

describe.skipIf(TEST_LIBSQL)("a damaged store database", () => {
  // Made in beforeAll: a skipped describe runs its body, never its hooks.
  let [dir, data, shop1, shop2, shop4] = ["", "", "", "", ""];
  let server: ServerProcess | undefined;
  let shop5 = "";

  beforeAll(async () => {
    dir = tempDir("storeapi-damaged-");
    data = join(dir, "data");
    [shop1, shop2, shop4] = ["shop1", "shop2", "shop4"].map((slug) =>
      join(data, "stores", `${slug}.db`),
    );
    const fixture = join(dir, "fixture.json");
    writeFileSync(
      fixture,
      JSON.stringify({
        stores: [
          testStore(),
          otherStore(),
          testStore({ slug: "shop3", domain: "shop3.test", ownerEmail: "owner@shop3.test" }),
          testStore({ slug: "shop4", domain: "shop4.test", ownerEmail: "owner@shop4.test" }),
          testStore({ slug: "shop5", domain: "shop5.test", ownerEmail: "owner@shop5.test" }),
        ],
      }),
    );
    const loaded = await runCli(["load", fixture, "--data", data]);
    expect([loaded.code, loaded.stderr]).toEqual([0, ""]);
    writeFileSync(shop1, randomBytes(64 * 1024)); // not a database at all
    scramblePages(shop2); // a database whose pages are noise
    rmSync(`${shop2}-wal`, { force: true });
    rmSync(shop4);
    mkdirSync(shop4); // not even a file: SQLite cannot open it
    shop5 = join(data, "stores", "shop5.db");
    scrambleTable(shop5, "products"); // opens; the damage is met by a statement
    server = await spawnServer(data);
  });

  afterAll(async () => {
    await server?.signal("SIGTERM");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const errorLines = () =>
    (server as ServerProcess)
      .stdout()
      .split("\n")
      .filter((line) => line.includes('"level":"error"'))
      .map((line) => JSON.parse(line));

  test("its requests answer 503 store_unavailable and the log names the file; other stores and /healthz go on", async () => {
    const url = (server as ServerProcess).url;
    for (const [host, key] of [
      ["shop1.test", KEYS.all],
      ["shop2.test", KEYS.other],
      ["shop4.test", KEYS.all],
    ]) {
      for (const [method, path, body] of [
        ["GET", "/api/v1/products", undefined],
        ["POST", "/api/v1/products", { name: "Mug", price: 1 }],
        ["GET", "/api/v1/orders/1", undefined],
      ] as const) {
        const answer = await send(url, path, { method, host, key, body });
        expect([host, method, path, answer.status]).toEqual([host, method, path, 503]);
        expect(answer.json).toEqual(UNAVAILABLE);
        expect(answer.headers.get("x-request-id")).toBeString();
      }
    }
    const healthy = await send(url, "/api/v1/products", { host: "shop3.test" });
    expect([healthy.status, healthy.json.data]).toEqual([200, []]);
    expect((await send(url, "/healthz")).status).toBe(200);
    const failures = errorLines().filter((line) => !line.error.includes("shop5"));
    // One line per file (then one per 10 s each): a damaged store never hides another.
    expect(failures.map((line) => [line.msg, line.error])).toEqual(
      [
        `${shop1} is damaged (file is not a database); restore it from a backup`,
        `${shop2} is damaged (database disk image is malformed); restore it from a backup`,
        `${shop4} cannot be opened: it is a directory`,
      ].map((error) => ["request failed: storage out of reach, full or damaged", error]),
    );
    expect(JSON.stringify(failures)).not.toContain("SELECT");
  });

  test("damage a statement meets after the open: 503, and the log, backup and commands name the file", async () => {
    const url = (server as ServerProcess).url;
    const products = await send(url, "/api/v1/products", { host: "shop5.test", key: KEYS.all });
    expect([products.status, products.json]).toEqual([503, UNAVAILABLE]);
    const shop5Lines = () => errorLines().filter((line) => line.error.includes("shop5"));
    await until(() => shop5Lines().length > 0); // the line is written after the answer
    expect(shop5Lines().map((line) => [line.msg, line.error])).toEqual([
      [
        "request failed: storage out of reach, full or damaged",
        `${shop5} is damaged (database disk image is malformed); restore it from a backup`,
      ],
    ]);
    // Backup takes the stores in order: only shop5 damaged, in a copy of the directory.
    const alone = join(dir, "only-shop5");
    mkdirSync(join(alone, "stores"), { recursive: true });
    writeFileSync(join(alone, "platform.db"), readFileSync(join(data, "platform.db")));
    writeFileSync(join(alone, "stores", "shop5.db"), readFileSync(shop5));
    const platform = new Database(join(alone, "platform.db"));
    platform.run("DELETE FROM stores WHERE slug <> 'shop5'");
    platform.close();
    const backedUp = await runCli(["backup", join(dir, "copy-of-shop5"), "--data", alone]);
    expect([backedUp.code, backedUp.stderr]).toEqual([
      1,
      `storeapi: ${join(alone, "stores", "shop5.db")} is damaged (database disk image is malformed); restore it from a backup\n`,
    ]);
    // Any command meeting such damage names the file (the store pool does).
    scrambleTable(join(alone, "stores", "shop5.db"), "api_keys");
    const listed = await runCli(["keys", "list", "shop5", "--data", alone]);
    expect([listed.code, listed.stderr]).toEqual([
      1,
      `storeapi: ${join(alone, "stores", "shop5.db")} is damaged (database disk image is malformed); restore it from a backup\n`,
    ]);
  });

  test("commands that need the store say which file is damaged, in one line, exit 1", async () => {
    const listed = await runCli(["keys", "list", "shop1", "--data", data]);
    expect([listed.code, listed.stdout, listed.stderr]).toEqual([
      1,
      "",
      `storeapi: ${shop1} is damaged (file is not a database); restore it from a backup\n`,
    ]);
    const other = await runCli(["keys", "list", "shop2", "--data", data]);
    expect([other.code, other.stderr]).toEqual([
      1,
      `storeapi: ${shop2} is damaged (database disk image is malformed); restore it from a backup\n`,
    ]);
    const unopenable = await runCli(["keys", "list", "shop4", "--data", data]);
    expect([unopenable.code, unopenable.stderr]).toEqual([
      1,
      `storeapi: ${shop4} cannot be opened: it is a directory\n`,
    ]);
    // mail list over every store shows the others' mail, then names what it left out.
    const noMail = await runCli(["mail", "list", "--data", data]);
    expect([noMail.code, noMail.stdout]).toEqual([1, "no mail in the stores that could be read\n"]);
    const made = await runCli([
      "keys",
      "create",
      "shop3",
      "--name",
      "m",
      "--orders",
      "read",
      "--data",
      data,
    ]);
    expect(made.code).toBe(0); // its owner is told: one email in shop3's outbox
    const mail = await runCli(["mail", "list", "--json", "--data", data]);
    expect([
      mail.code,
      mail.json.map((entry: { store: string; kind: string }) => [entry.store, entry.kind]),
      mail.stderr,
    ]).toEqual([
      1,
      [["shop3", "key_created"]],
      `storeapi: left out 3 stores whose database cannot be read; the first: ${shop1} is damaged (file is not a database); restore it from a backup\n`,
    ]);
    const stores = await runCli(["stores", "list", "--json", "--data", data]);
    expect(stores.code).toBe(0);
    expect(stores.json.map((store: { slug: string }) => store.slug)).toEqual([
      "shop1",
      "shop2",
      "shop3",
      "shop4",
      "shop5",
    ]);
  });

  test("the management API lists and deletes a store whose file is damaged (without order statuses); the file and its WAL archived", async () => {
    const url = (server as ServerProcess).url;
    const hostKey = await newHostKey(data);
    const call = (method: string, path: string) => manage(url, method, path, { key: hostKey });
    let deleted = await call("DELETE", "/stores/shop2");
    for (let i = 0; i < 50 && deleted.status === 401; i++) {
      await Bun.sleep(100); // the server sees the new host key within a second
      deleted = await call("DELETE", "/stores/shop2");
    }
    expect(deleted.status).toBe(200);
    expect([deleted.json.data.slug, deleted.json.data.orderStatuses]).toEqual(["shop2", []]);
    expect(
      (await send(url, "/api/v1/products", { host: "shop2.test", key: KEYS.other })).status,
    ).toBe(404);
    const archived = readdirSync(join(data, "deleted")).filter((n) => n.startsWith("shop2-"));
    expect(archived.filter((n) => n.endsWith(".db"))).toHaveLength(1);
    // Its WAL (if SQLite made one) goes beside it: it could not be checkpointed into the file.
    for (const name of archived) expect(name).toMatch(/^shop2-\d{8}T\d{6}Z\.db(-wal)?$/);
    expect(existsSync(shop2)).toBe(false);
    // A directory where the file should be (SQLite cannot open it) is archived the same way.
    expect((await call("DELETE", "/stores/shop4")).status).toBe(200);
    const listed = await runCli(["stores", "list", "--json", "--data", data]);
    expect(listed.json.map((store: { slug: string }) => store.slug)).toEqual([
      "shop1",
      "shop3",
      "shop5",
    ]);
    // A damaged store is listed without order statuses; the others with theirs.
    const stores = await call("GET", "/stores");
    expect(stores.status).toBe(200);
    expect(
      stores.json.data.map((s: { slug: string; orderStatuses: unknown[] }) => [
        s.slug,
        s.orderStatuses.length,
      ]),
    ).toEqual([
      ["shop5", 4],
      ["shop3", 4],
      ["shop1", 0],
    ]);
  });

  // Damage met after the file opened: SQLite's words name no file (the fixture's own dir).
  test("platform.db damaged in its pages (its header whole): commands name it too", async () => {
    const copy = join(dir, "pages-damaged");
    const fixture = join(dir, "pages-fixture.json");
    writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
    expect((await runCli(["load", fixture, "--data", copy])).code).toBe(0);
    const platform = join(copy, "platform.db");
    scrambleTable(platform, "stores");
    for (const command of [
      ["stores", "list"],
      ["keys", "list", "shop1"],
    ]) {
      const ran = await runCli([...command, "--data", copy]);
      expect([command.join(" "), ran.code, ran.stderr]).toEqual([
        command.join(" "),
        1,
        expect.stringMatching(
          new RegExp(`^storeapi: ${platform} is damaged \\(.+\\); restore it from a backup\n$`),
        ),
      ]);
    }
  });

  test("a damaged platform.db: serve and commands refuse in one line naming it, exit 1; backup leaves its destination empty", async () => {
    expect(await server?.signal("SIGTERM")).toBe(0);
    server = undefined;
    const platform = join(data, "platform.db");
    writeFileSync(platform, randomBytes(64 * 1024));
    rmSync(`${platform}-wal`, { force: true });
    const refusal = `storeapi: ${platform} is damaged (file is not a database); restore it from a backup\n`;
    for (const command of [
      ["serve", "--listen", "127.0.0.1:0", "--allow-http"],
      ["stores", "list"],
    ]) {
      const ran = await runCli([...command, "--data", data]);
      expect([command[0], ran.code, ran.stderr]).toEqual([command[0], 1, refusal]);
    }
    // A backup refused so leaves its destination empty: the same command works once mended.
    const dest = join(dir, "backup-of-damaged");
    const backedUp = await runCli(["backup", dest, "--data", data]);
    const left = existsSync(dest) ? readdirSync(dest) : []; // refused before it was made
    expect([backedUp.code, backedUp.stderr, left]).toEqual([1, refusal, []]);
  });
});
