import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { basename, join } from "node:path";
import { AdminClient, ORDERS_WRITE, signInToken } from "../admin-support";
import { send, tempDir, testStore, until } from "../helpers";
import { manage, newHostKey, storeBody } from "../manage-support";
import { runCli, type ServerProcess, serverRunsOnDeno, spawnServer } from "../process";
import { type Sqld, startSqld, TEST_LIBSQL } from "../sqld";

/**
 * A full disk under a live server: writes answer 503 `store_unavailable` (not 500), reads
 * go on, nothing acknowledged is lost, and writes work again once there is room. The data
 * directory is a small tmpfs of its own (mounting needs root; elsewhere this is skipped).
 */

const mountPoint = tempDir("storeapi-disk-full-");
/** Files that must not take the small disk's room. */
const outside = tempDir("storeapi-disk-full-outside-");

async function run(command: string[]): Promise<boolean> {
  const proc = Bun.spawn(command, { stdout: "ignore", stderr: "ignore" });
  return (await proc.exited) === 0;
}

const mountTmpfs = (at = mountPoint, size = "4m") =>
  run(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", at]);
const unmount = (at = mountPoint) => run(["umount", "--lazy", at]);

// Whether this machine lets the test mount (root): tried and undone at once, so that a run
// that filters the test out leaves nothing mounted.
const canMount = !TEST_LIBSQL && (await mountTmpfs()) && (await unmount());
if (!canMount) {
  rmSync(mountPoint, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
}

describe.skipIf(!canMount)("a full disk", () => {
  let server: ServerProcess | undefined;
  const data = join(mountPoint, "data");

  beforeAll(async () => {
    expect(await mountTmpfs()).toBe(true);
    mkdirSync(data);
    const fixture = join(mountPoint, "fixture.json");
    writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
    const loaded = await runCli(["load", fixture, "--data", data]);
    expect([loaded.code, loaded.stderr]).toEqual([0, ""]);
    rmSync(fixture);
    server = await spawnServer(data, ["--rate-limit", "1000000"]);
  });

  afterAll(async () => {
    await server?.signal("SIGTERM");
    // Lazily: this process may still hold closed store files until they are collected.
    await unmount();
    rmSync(mountPoint, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  test("writes answer 503 store_unavailable, reads go on, nothing acknowledged is lost, and room brings writes back", async () => {
    const url = (server as ServerProcess).url;
    const admin = new AdminClient(url);
    expect((await admin.signIn(await signInToken(data, "shop1"))).status).toBe(303);
    const description = "x".repeat(5000);
    const created: number[] = [];
    let refused: Awaited<ReturnType<typeof send>> | undefined;
    // 4 MiB hold fewer than 800 such products: the disk fills long before the bound.
    for (let i = 0; i < 2000 && !refused; i++) {
      const answer = await send(url, "/api/v1/products", {
        method: "POST",
        body: { name: `Product ${i}`, price: 1, description },
      });
      if (answer.status === 201) created.push(answer.json.data.id);
      else refused = answer;
    }
    expect(refused?.status).toBe(503);
    expect(refused?.json).toEqual({
      ok: false,
      error: {
        code: "store_unavailable",
        message: "This store is unavailable right now; try again later.",
      },
    });
    expect(created.length).toBeGreaterThan(10);

    // The admin screen says the same as a page.
    const keyRefused = await admin.post("/api/admin/keys", ORDERS_WRITE);
    expect(keyRefused.status).toBe(503);
    expect(keyRefused.text).toContain("This store is unavailable right now; try again later.");

    const first = await send(url, `/api/v1/products/${created[0]}`);
    expect([first.status, first.json.data.name]).toEqual([200, "Product 0"]);

    // A command that runs out of space says so in one line and leaves nothing half made.
    const backupDir = join(mountPoint, "backup");
    const backup = await runCli(["backup", backupDir, "--data", data]);
    expect([backup.code, backup.stderr]).toEqual([
      1,
      `storeapi: cannot write ${backupDir}/platform.db: the disk is full; free some space there and run the command again\n`,
    ]);
    expect(existsSync(backupDir) ? readdirSync(backupDir) : []).toEqual([]);

    // A backup to another disk still reads everything off this one, to the last byte full
    // (it failed taking the stores lock, whose journal could not be written).
    const filler = join(mountPoint, "filler");
    fillDisk(filler, 0);
    try {
      const copy = join(outside, "copy");
      const copied = await runCli(["backup", copy, "--data", data, "--json"]);
      expect([copied.code, copied.stderr, copied.json?.stores]).toEqual([0, "", 1]);
    } finally {
      rmSync(filler);
    }

    expect(await run(["mount", "-o", "remount,size=16m", mountPoint])).toBe(true);
    const after = await send(url, "/api/v1/products", {
      method: "POST",
      body: { name: "After", price: 2 },
    });
    expect(after.status).toBe(201);

    // Every acknowledged product is there, and nothing else: the refused write left no row.
    const ids: number[] = [];
    let cursor: string | null = null;
    do {
      const page = await send(
        url,
        `/api/v1/products?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      ids.push(...page.json.data.map((product: { id: number }) => product.id));
      cursor = page.json.nextCursor;
    } while (cursor);
    expect(ids.sort((a, b) => a - b)).toEqual(
      [...created, after.json.data.id].sort((a, b) => a - b),
    );
  });

  test("a load that fills the disk says so in one line and registers nothing", async () => {
    // ~20 MB of orders into the 16 MiB left after the test above.
    const orders = Array.from({ length: 20_000 }, (_, i) => ({
      number: 1001 + i,
      status: 1,
      total: 10,
      customerNotes: "n".repeat(1000),
    }));
    const fixture = join(outside, "big.json");
    writeFileSync(
      fixture,
      JSON.stringify({ stores: [testStore({ slug: "big", domain: "big.test", orders })] }),
    );
    const loaded = await runCli(["load", fixture, "--data", data]);
    expect([
      loaded.code,
      loaded.stderr.split("\n").filter((l) => l.startsWith("storeapi:")),
    ]).toEqual([1, ["storeapi: the disk is full; free some space and run the command again"]]);
    const stores = await runCli(["stores", "list", "--json", "--data", data]);
    expect(stores.json.map((s: { slug: string }) => s.slug)).toEqual(["shop1"]);
  });

  test("a store create on a full disk, by the management API or by a command, leaves no file behind", async () => {
    const url = (server as ServerProcess).url;
    const hostKey = await newHostKey(data); // while there is room
    const keyWorks = async () =>
      (await manage(url, "GET", "/stores", { key: hostKey })).status === 200;
    expect(await until(keyWorks)).toBe(true); // the server reloads host keys within a second
    const filler = join(mountPoint, "filler");
    fillDisk(filler, 128 * 1024); // room to begin a store, not to finish it
    try {
      const created = await manage(url, "POST", "/stores", {
        key: hostKey,
        body: storeBody("full1"),
      });
      expect([created.status, created.json.error.code]).toEqual([503, "store_unavailable"]);
      const added = await runCli([
        "stores",
        "add",
        "full2",
        "--domain",
        "full2.test",
        "--plan",
        "growth",
        "--owner-email",
        "owner@full2.test",
        "--data",
        data,
      ]);
      expect([added.code, added.stderr]).toEqual([
        1,
        "storeapi: the disk is full; free some space and run the command again\n",
      ]);
      // Nothing of either store: no file to clear by hand, none a restart would keep.
      expect(readdirSync(join(data, "stores")).filter((name) => name.startsWith("full"))).toEqual(
        [],
      );
    } finally {
      rmSync(filler);
    }
  });
});

describe.skipIf(!canMount)("a backup destination without free inodes", () => {
  const few = tempDir("storeapi-few-inodes-");
  afterAll(async () => {
    await unmount(few);
    rmSync(few, { recursive: true, force: true });
  });

  test("is named with why, not the data directory's healthy file", async () => {
    const data = join(few, "..", `${basename(few)}-data`);
    const fixture = join(few, "..", `${basename(few)}-fixture.json`);
    try {
      writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
      expect((await runCli(["load", fixture, "--data", data])).code).toBe(0);
      expect(await run(["mount", "-t", "tmpfs", "-o", "size=8m,nr_inodes=5", "tmpfs", few])).toBe(
        true,
      );
      const dest = join(few, "copy");
      const copied = await runCli(["backup", dest, "--data", data]);
      expect([copied.code, copied.stderr]).toEqual([
        1,
        `storeapi: ${dest}/platform.db cannot be opened: its file system has no room for another file (no free inodes)\n`,
      ]);
      expect(readdirSync(dest)).toEqual([]); // emptied again
      await unmount(few);
      // Out of room: the copy is named, not the data directory's disk.
      expect(await run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", few])).toBe(true);
      const full = await runCli(["backup", dest, "--data", data]);
      expect(full.code).toBe(1);
      expect(full.stderr).toMatch(
        /^storeapi: cannot write \/.*\/copy\/(platform|stores\/shop1)\.db: the disk is full; free some space there and run the command again\n$/,
      );
    } finally {
      rmSync(data, { recursive: true, force: true });
      rmSync(fixture, { force: true });
    }
  });
});

// Under Deno `serve` refuses a libSQL server (see the README).
describe.skipIf(!canMount || serverRunsOnDeno())("a full disk under the libSQL server", () => {
  const sqldDisk = tempDir("storeapi-sqld-disk-");
  const beside = tempDir("storeapi-sqld-disk-beside-");
  let sqld: Sqld | undefined;
  let node: ServerProcess | undefined;

  afterAll(async () => {
    await node?.signal("SIGTERM");
    await sqld?.stop();
    await unmount(sqldDisk);
    rmSync(sqldDisk, { recursive: true, force: true });
    rmSync(beside, { recursive: true, force: true });
  });

  test("commands and the log name the server's disk in one line, not a file on this machine or an unexpected failure", async () => {
    expect(await mountTmpfs(sqldDisk, "24m")).toBe(true);
    sqld = await startSqld({ replicas: false, dbPath: join(sqldDisk, "data.sqld") });
    const fixture = join(beside, "fixture.json");
    writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
    const loaded = await runCli(["load", fixture, ...sqld.flags]);
    expect([loaded.code, loaded.stderr]).toEqual([0, ""]);
    node = await spawnServer(join(beside, "node"), sqld.flags);
    fillDisk(join(sqldDisk, "filler"), 0);

    const keyCreate = await runCli([
      "keys",
      "create",
      "shop1",
      "--name",
      "full",
      "--orders",
      "read",
      ...sqld.flags,
    ]);
    const hostKey = await runCli(["host-keys", "create", "--name", "full", ...sqld.flags]);
    for (const failed of [keyCreate, hostKey])
      expect([failed.code, failed.stderr]).toEqual([
        1,
        'storeapi: a database could not be used: SQLite says "disk I/O error"; check that its disk has room and is writable (with --libsql-url, the libSQL server\'s disk)\n',
      ]);

    // A store's refused write is logged by its namespace, with what the server said.
    const created = await send(node.url, "/api/v1/products", {
      method: "POST",
      body: { name: "Lamp", price: 30 },
    });
    expect([created.status, created.json.error.code]).toEqual([503, "store_unavailable"]);
    const failureLine = () =>
      (node as ServerProcess)
        .stdout()
        .split("\n")
        .map((line) => (line.startsWith("{") ? JSON.parse(line) : {}))
        .find((line) => line.level === "error");
    expect(await until(() => failureLine() !== undefined)).toBe(true); // written after the answer
    expect(failureLine()?.error).toBe(
      `namespace store-shop1 on ${sqld.url} cannot be used: the libSQL server says "disk I/O error" (is its disk full or read-only?)`,
    );
  });
});

/** Writes `path` until the disk has only `leave` bytes of room left. */
/** Fills the disk to its last byte with the file `path`, then gives `leave` bytes back. */
function fillDisk(path: string, leave: number): void {
  const fd = openSync(path, "w");
  try {
    for (const size of [64 * 1024, 4096, 1]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      }
    }
  } finally {
    ftruncateSync(fd, Math.max(0, fstatSync(fd).size - leave));
    closeSync(fd);
  }
}

describe.skipIf(!canMount)("a data directory on a read-only file system", () => {
  const readOnly = tempDir("storeapi-read-only-");
  afterAll(async () => {
    await unmount(readOnly);
    rmSync(readOnly, { recursive: true, force: true });
  });

  // Each named a file that was never there: "cannot remove DIR/stores/shop9.db" and
  // "cannot remove DIR/loading" (removing a missing path fails too on such a file system).
  test("stores add and load name what they could not make", async () => {
    expect(await mountTmpfs(readOnly, "8m")).toBe(true);
    const data = join(readOnly, "data");
    const fixture = join(readOnly, "fixture.json");
    writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
    expect((await runCli(["load", fixture, "--data", data])).code).toBe(0);
    const another = join(readOnly, "another.json");
    writeFileSync(
      another,
      JSON.stringify({ stores: [testStore({ slug: "shop2", domain: "shop2.test" })] }),
    );
    expect(await run(["mount", "-o", "remount,ro", readOnly])).toBe(true);
    const added = await runCli([
      "stores",
      "add",
      "shop9",
      "--domain",
      "shop9.test",
      "--plan",
      "free",
      "--owner-email",
      "o@shop9.test",
      "--data",
      data,
    ]);
    expect([added.code, added.stderr]).toEqual([
      1,
      `storeapi: ${data}/stores/shop9.db cannot be opened: the file system is read-only\n`,
    ]);
    const loaded = await runCli(["load", another, "--data", data]);
    expect([loaded.code, loaded.stderr]).toEqual([
      1,
      `storeapi: cannot create the directory ${data}/loading: the file system is read-only\n`,
    ]);
  });
});
