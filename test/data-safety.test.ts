/** Issue 13, data safety: one server per directory, crash-atomic load, private files, no invented stores. */
import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { DataDirLock, LOAD_LOCK, SERVE_LOCK } from "../src/db/data-dir";
import { KEYS, otherStore, STATUSES, scratchDirs, send, testStore, until } from "./helpers";
import { manage, newHostKey, storeBody } from "./manage-support";
import { isOneCleanLine, runCli, spawnServer, storeapiCommand } from "./process";
import { TEST_LIBSQL } from "./sqld";

const freshDir = scratchDirs("storeapi-safety-");

function writeFixture(dir: string, stores: unknown[], name = "fixture.json"): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ stores }));
  return path;
}

/** A store with only its own fields. */
const bare = (slug: string) => ({
  slug,
  name: `Loaded ${slug}`,
  domain: `${slug}.test`,
  plan: "growth",
  ownerEmail: `owner@${slug}.test`,
});

/** `load` of shop1 and shop2 (a fixture written in `dir`) into `data`. */
const loadShops = (dir: string, data: string) =>
  runCli(["load", writeFixture(dir, [testStore(), otherStore()]), "--data", data]);

/** A data directory (DIR/data) loaded with shop1 and shop2; returns its path. */
async function loadedDataDir(): Promise<string> {
  const dir = freshDir();
  const data = join(dir, "data");
  expect((await loadShops(dir, data)).code).toBe(0);
  return data;
}

/** A server on `data` answers shop2 503 `store_unavailable` and serves shop1 as usual. */
async function expectShop2Unavailable(data: string): Promise<void> {
  const server = await spawnServer(data);
  try {
    const answer = await send(server.url, "/api/v1/products", {
      host: "shop2.test",
      key: KEYS.other,
    });
    expect([answer.status, answer.json.error.code]).toEqual([503, "store_unavailable"]);
    expect((await send(server.url, "/api/v1/products")).status).toBe(200);
  } finally {
    await server.signal("SIGTERM");
  }
}

/**
 * A store answering 503 (its file gone under the server) is still listed, changed (saved,
 * and said so) and deleted by the host, and made again through the server without a restart.
 */
async function hostCanStillManage(url: string, hostKey: string, product: object): Promise<void> {
  const host = (method: string, path: string, body?: unknown) =>
    manage(url, method, path, { key: hostKey, body });
  const listed = await host("GET", "/stores");
  const shop2 = listed.json.data.find((s: { slug: string }) => s.slug === "shop2");
  expect([listed.status, shop2?.orderStatuses]).toEqual([200, []]);
  const patched = await host("PATCH", "/stores/shop2", { plan: "pro" });
  expect([patched.status, patched.json.data.plan]).toEqual([200, "pro"]);
  expect((await host("DELETE", "/stores/shop2")).status).toBe(200);
  const made = await host("POST", "/stores", { ...storeBody("shop2"), domain: "shop2.test" });
  expect(made.status).toBe(201);
  expect((await send(url, "/api/v1/products", product)).status).toBe(401); // a new store: no keys
}

const productNames = async (url: string, host = "shop1.test") =>
  (
    (await send(url, "/api/v1/products", { host })).json as { data: Array<{ name: string }> }
  ).data.map((p) => p.name);

/** A `serve` of `data` started beside whatever holds it (it exits at once when refused). */
const serveBeside = (data: string) =>
  runCli(["serve", "--data", data, "--listen", "127.0.0.1:0", "--allow-http"]);

// The serve and load locks are files in the data directory; on a libSQL server there are none.
describe.skipIf(TEST_LIBSQL)("one server per data directory", () => {
  test("a second serve refuses with one line; after kill -9 of the first a new one starts", async () => {
    const data = await loadedDataDir();
    const first = await spawnServer(data);
    try {
      const second = await serveBeside(data);
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(`storeapi: another storeapi server is already serving ${data}\n`);
      // the CLI still works beside the live server
      expect((await runCli(["stores", "list", "--json", "--data", data])).json).toHaveLength(2);
    } finally {
      await first.signal("SIGKILL");
    }
    const third = await spawnServer(data);
    expect((await send(third.url, "/api/v1/products")).status).toBe(200);
    expect(await third.signal("SIGTERM")).toBe(0);
  });

  test("a serve started while load --replace runs says that the load holds the directory", async () => {
    const data = await loadedDataDir();
    // The locks a `load --replace` holds for as long as it runs.
    const held = [LOAD_LOCK, SERVE_LOCK].map((name) => DataDirLock.tryAcquire(data, name));
    try {
      const serve = await serveBeside(data);
      expect([serve.code, serve.stderr]).toEqual([
        1,
        `storeapi: storeapi load --replace is replacing stores in ${data}; start the server once it is done\n`,
      ]);
    } finally {
      for (const lock of held) lock?.release();
    }
  });

  test("load --replace beside a running server is refused and loses nothing; new stores still load", async () => {
    const dir = freshDir();
    const data = await loadedDataDir();
    const server = await spawnServer(data);
    try {
      const created = await send(server.url, "/api/v1/products", {
        method: "POST",
        body: { name: "Kept", price: 5 },
      });
      expect(created.status).toBe(201);
      const replace = await runCli([
        "load",
        writeFixture(dir, [testStore()], "again.json"),
        "--replace",
        "--data",
        data,
      ]);
      expect(replace.code).toBe(1);
      expect(replace.stderr).toBe(
        `storeapi: a server is serving ${data}; stop it before load --replace (it would keep writing to the replaced files)\n`,
      );
      const added = await runCli([
        "load",
        writeFixture(dir, [otherStore({ slug: "shop3", domain: "shop3.test" })], "new.json"),
        "--data",
        data,
      ]);
      expect(added.code).toBe(0);
      expect(await productNames(server.url)).toEqual(["Kept"]);
    } finally {
      expect(await server.signal("SIGTERM")).toBe(0);
    }
    const restarted = await spawnServer(data);
    try {
      expect(await productNames(restarted.url)).toEqual(["Kept"]);
      expect(
        (await send(restarted.url, "/api/v1/products", { host: "shop3.test", key: KEYS.other }))
          .status,
      ).toBe(200);
    } finally {
      await restarted.signal("SIGTERM");
    }
  });
});

// Staging and moving store files; on a libSQL server load fills namespaces (test/libsql.test.ts).
describe.skipIf(TEST_LIBSQL)("load is all or nothing across a crash", () => {
  const crashAt = (fixture: string, data: string, step: string) =>
    runCli(["load", fixture, "--data", data], { env: { STOREAPI_TEST_LOAD_CRASH: step } });
  const slugs = async (data: string) =>
    (
      (await runCli(["stores", "list", "--json", "--data", data])).json as Array<{ slug: string }>
    ).map((s) => s.slug);

  test("killed before the commit: nothing is registered, no staging left, and the load re-runs", async () => {
    const dir = freshDir();
    const data = join(dir, "data");
    const fixture = writeFixture(dir, [testStore(), otherStore()]);
    const crashed = await crashAt(fixture, data, "built-one");
    expect(crashed.code).not.toBe(0);
    expect(existsSync(join(data, "loading"))).toBe(true);
    expect(await slugs(data)).toEqual([]);
    expect(existsSync(join(data, "loading"))).toBe(false);
    expect((await runCli(["load", fixture, "--data", data])).code).toBe(0);
    expect(await slugs(data)).toEqual(["shop1", "shop2"]);
  });

  test("a file that cannot be moved into place after the commit: the load says the stores are loaded and how it is finished", async () => {
    const dir = freshDir();
    const data = join(dir, "data");
    // The copy moveIntoPlace makes cannot be written (as a full disk would refuse it).
    mkdirSync(join(data, "stores", "shop1.db.copy"), { recursive: true });
    const loaded = await loadShops(dir, data);
    expect(loaded.code).toBe(1);
    expect(loaded.stderr).toStartWith(
      `storeapi: the stores are loaded, but their files did not all reach ${join(data, "stores")} (`,
    );
    expect(loaded.stderr).toEndWith(
      `); once that is fixed, any storeapi command on ${data} (storeapi stores list, say) moves them there, and so does a running server within seconds; until then it answers 503 for them\n`,
    );
    rmSync(join(data, "stores", "shop1.db.copy"), { recursive: true });
    expect(await slugs(data)).toEqual(["shop1", "shop2"]);
    expect(existsSync(join(data, "loading"))).toBe(false);
    const again = await runCli(["keys", "list", "shop1", "--json", "--data", data]);
    expect(again.code).toBe(0);
  });

  test("killed beside a running server after the commit: the server finishes the move itself, logging no error", async () => {
    const dir = freshDir();
    const data = join(dir, "data");
    expect((await runCli(["load", writeFixture(dir, [testStore()]), "--data", data])).code).toBe(0);
    const server = await spawnServer(data);
    try {
      const crashed = await crashAt(writeFixture(dir, [otherStore()]), data, "committed");
      expect(crashed.code).not.toBe(0);
      const shop2 = async () =>
        (await send(server.url, "/api/v1/products", { host: "shop2.test", key: KEYS.other }))
          .status;
      // No command runs meanwhile: the server moves the staged file into place (every 2 s).
      expect(await until(async () => (await shop2()) === 200)).toBe(true);
      // The staging directory goes, and the line is logged, just after the move.
      const settled = () =>
        !existsSync(join(data, "loading")) &&
        server
          .stdout()
          .includes('"msg":"finished a load that stopped part-way beside this server"');
      expect(await until(settled)).toBe(true);
      // Meanwhile the mail worker looked at the new store (as at every new store) and found
      // its file still staged: it looks again in a moment, with no error (it said "restore
      // the file from a backup" for each such store).
      const errors = server
        .stdout()
        .split("\n")
        .filter((line) => line.includes('"level":"error"'));
      expect(errors).toEqual([]);
    } finally {
      await server.signal("SIGTERM");
    }
  });

  for (const step of ["committed", "copied-one", "moved-one"]) {
    test(`killed at "${step}": every store is registered and has its data`, async () => {
      const dir = freshDir();
      const data = join(dir, "data");
      const crashed = await crashAt(writeFixture(dir, [testStore(), otherStore()]), data, step);
      expect(crashed.code).not.toBe(0);
      const server = await spawnServer(data);
      try {
        // 200s: the fixture's keys authenticate, so each store has its data, not an empty file
        expect((await send(server.url, "/api/v1/products")).status).toBe(200);
        expect(
          (await send(server.url, "/api/v1/products", { host: "shop2.test", key: KEYS.other }))
            .status,
        ).toBe(200);
      } finally {
        await server.signal("SIGTERM");
      }
      expect(existsSync(join(data, "loading"))).toBe(false);
      expect(
        readdirSync(join(data, "stores"))
          .filter((n) => !/-(wal|shm)$/.test(n))
          .sort(),
      ).toEqual(["shop1.db", "shop2.db"]);
    });
  }

  test("a registered store whose file is missing answers 503 store_unavailable; the others are served", async () => {
    const data = await loadedDataDir();
    rmSync(join(data, "stores", "shop2.db"));
    const server = await spawnServer(data);
    try {
      const missing = await send(server.url, "/api/v1/products", {
        host: "shop2.test",
        key: KEYS.other,
      });
      expect(missing.status).toBe(503);
      expect(missing.json).toEqual({
        ok: false,
        error: {
          code: "store_unavailable",
          message: "This store is unavailable right now; try again later.",
        },
      });
      expect((await send(server.url, "/api/v1/products")).status).toBe(200);
      expect(existsSync(join(data, "stores", "shop2.db"))).toBe(false);
      // Logged in the background once the server listens.
      const logged = () =>
        server.stdout().includes('"store database file is missing; the store answers 503"');
      for (const endAt = Date.now() + 10_000; !logged() && Date.now() < endAt; )
        await Bun.sleep(50);
      expect(logged()).toBe(true);
    } finally {
      await server.signal("SIGTERM");
    }
  });

  test("a store file no store is registered for (a create killed before registering) is named at start", async () => {
    const data = await loadedDataDir();
    const stray = join(data, "stores", "ghost.db");
    copyFileSync(join(data, "stores", "shop2.db"), stray);
    const server = await spawnServer(data);
    try {
      const line = () =>
        server
          .stdout()
          .split("\n")
          .find((text) => text.includes("no store is registered for"));
      await until(() => line() !== undefined);
      const { level, msg, count, files } = JSON.parse(line() as string);
      expect({ level, msg, count, files }).toEqual({
        level: "warn",
        msg: "store files no store is registered for (a create or a delete stopped part-way): move one to keep it (a deleted store belongs in DIR/deleted/), or delete it; creating that store replaces its file",
        count: 1,
        files: [stray],
      });
      expect((await send(server.url, "/api/v1/products")).status).toBe(200);
    } finally {
      await server.signal("SIGTERM");
    }
  });

  test("a command on a registered store whose file is missing says so and makes no empty file in its place", async () => {
    const data = await loadedDataDir();
    const path = join(data, "stores", "shop2.db");
    rmSync(path);
    const line = `storeapi: ${path} is missing: store "shop2" is registered but has no database; restore the file from a backup\n`;
    const commands = [
      ["keys", "list", "shop2"],
      ["keys", "create", "shop2", "--name", "k", "--products", "read"],
      ["admin-link", "shop2"],
      ["backup", join(freshDir(), "backup")],
    ];
    for (const command of commands) {
      const ran = await runCli([...command, "--data", data]);
      expect([command.join(" "), ran.code, ran.stderr]).toEqual([command.join(" "), 1, line]);
      expect(readdirSync(join(data, "stores")).filter((name) => name.startsWith("shop2"))).toEqual(
        [],
      );
    }
  });

  for (const how of ["removed", "replaced by a backup's copy"]) {
    test(`a store file ${how} under the server is noticed: 503 until a restart, nothing written into either file`, async () => {
      const data = await loadedDataDir();
      const path = join(data, "stores", "shop2.db");
      const copy = join(data, "..", "shop2-copy.db");
      if (how !== "removed") {
        const backup = await runCli(["backup", join(data, "..", "backup"), "--data", data]);
        expect(backup.code).toBe(0);
        copyFileSync(join(data, "..", "backup", "stores", "shop2.db"), copy);
      }
      const hostKey = await newHostKey(data);
      const server = await spawnServer(data);
      try {
        const product = {
          method: "POST",
          host: "shop2.test",
          key: KEYS.other,
          body: { name: "P", price: 1 },
        };
        expect((await send(server.url, "/api/v1/products", product)).status).toBe(201);
        if (how === "removed")
          for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
        else renameSync(copy, path);
        const noticed = () => server.stdout().includes('"msg":"store database file was removed');
        expect(await until(noticed)).toBe(true);
        const line =
          server
            .stdout()
            .split("\n")
            .find((l) => l.includes("file was removed")) ?? "{}";
        expect(JSON.parse(line)).toMatchObject({ level: "error", store: "shop2", file: path });
        for (let i = 0; i < 3; i++) {
          const refused = await send(server.url, "/api/v1/products", product);
          expect([refused.status, refused.json.error.code]).toEqual([503, "store_unavailable"]);
        }
        expect((await send(server.url, "/api/v1/products")).status).toBe(200); // shop1
        if (how === "removed") await hostCanStillManage(server.url, hostKey, product);
      } finally {
        await server.signal("SIGTERM");
      }
      if (how === "removed") return;
      // The copy put in place is whole, and served once restarted (its -wal and -shm gone).
      const restored = new Database(path, { readonly: true });
      const check = restored.prepare("PRAGMA integrity_check").get() as { integrity_check: string };
      expect(check.integrity_check).toBe("ok");
      restored.close();
      for (const suffix of ["-wal", "-shm"]) rmSync(path + suffix, { force: true });
      const again = await spawnServer(data);
      try {
        const served = await send(again.url, "/api/v1/products", {
          host: "shop2.test",
          key: KEYS.other,
        });
        expect(served.status).toBe(200);
        expect(served.json.data.map((p: { name: string }) => p.name)).not.toContain("P");
      } finally {
        await again.signal("SIGTERM");
      }
    });
  }

  for (const how of ["removed", "replaced by a backup's copy"]) {
    test(`platform.db ${how} under the server: its writes answer 503 at once, until a restart`, async () => {
      const data = await loadedDataDir();
      const path = join(data, "platform.db");
      const copy = join(data, "..", "platform-copy.db");
      const hostKey = await newHostKey(data);
      if (how !== "removed") {
        const backup = await runCli(["backup", join(data, "..", "backup"), "--data", data]);
        expect(backup.code).toBe(0);
        copyFileSync(join(data, "..", "backup", "platform.db"), copy);
      }
      const server = await spawnServer(data);
      const host = (method: string, path: string, body?: unknown) =>
        manage(server.url, method, path, { key: hostKey, body });
      try {
        expect((await host("PATCH", "/stores/shop1", { name: "Before" })).status).toBe(200);
        if (how === "removed")
          for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
        else renameSync(copy, path);
        // Refused at once, not after a probe: a write acknowledged now would be lost.
        for (const [method, where, body] of [
          ["PATCH", "/stores/shop1", { name: "After" }],
          ["POST", "/stores", storeBody("shop9")],
        ] as const) {
          const refused = await host(method, where, body);
          expect([method, refused.status, refused.json.error.code]).toEqual([
            method,
            503,
            "store_unavailable",
          ]);
        }
        expect((await send(server.url, "/api/v1/products")).status).toBe(200); // the stores go on
        const problem =
          how === "removed"
            ? "the platform database cannot be read"
            : "platform.db was replaced under the server (restart it to use the new file)";
        const healthz = () => send(server.url, "/healthz");
        expect(await until(async () => (await healthz()).status === 503)).toBe(true);
        expect((await healthz()).json.error.message).toBe(`Unhealthy: ${problem}.`);
      } finally {
        await server.signal("SIGTERM");
      }
      expect(existsSync(join(data, "stores", "shop9.db"))).toBe(false);
      // Nothing made an empty platform.db in its place (the binding has no must-exist mode).
      if (how === "removed") return expect(existsSync(path)).toBe(false);
      // The copy put in place is whole, and served once restarted (its -wal and -shm gone).
      for (const suffix of ["-wal", "-shm"]) rmSync(path + suffix, { force: true });
      const again = await spawnServer(data);
      try {
        const shop1 = await manage(again.url, "GET", "/stores/shop1", { key: hostKey });
        expect([shop1.status, shop1.json.data.name]).toEqual([200, "Test Shop"]);
      } finally {
        await again.signal("SIGTERM");
      }
    });
  }

  test("a store file lost with its -wal left (a kill -9, then the file gone) is missing, and the -wal is kept", async () => {
    const data = await loadedDataDir();
    const path = join(data, "stores", "shop2.db");
    // A -wal holding a write: copied while its connection is open (closing folds it in).
    const writer = new Database(path);
    writer.exec("PRAGMA wal_autocheckpoint = 0; UPDATE api_keys SET name = name || '!'");
    copyFileSync(`${path}-wal`, join(data, "saved-wal"));
    writer.close();
    rmSync(path);
    renameSync(join(data, "saved-wal"), `${path}-wal`);
    const walBytes = statSync(`${path}-wal`).size;
    expect(walBytes).toBeGreaterThan(0);

    const keys = await runCli(["keys", "list", "shop2", "--data", data]);
    expect([keys.code, keys.stderr]).toEqual([
      1,
      `storeapi: ${path} is missing: store "shop2" is registered but has no database; restore the file from a backup (first delete the ${path}-wal and -shm left without it)\n`,
    ]);
    await expectShop2Unavailable(data);
    expect(existsSync(path)).toBe(false);
    expect(statSync(`${path}-wal`).size).toBe(walBytes);
  });

  test("an empty store file (a copy cut short) is no new empty store: 503 and one line naming it", async () => {
    const data = await loadedDataDir();
    const path = join(data, "stores", "shop2.db");
    writeFileSync(path, "");
    const keys = await runCli(["keys", "list", "shop2", "--data", data]);
    expect([keys.code, keys.stderr]).toEqual([
      1,
      `storeapi: ${path} is empty: store "shop2" is registered but has no database; restore the file from a backup\n`,
    ]);
    await expectShop2Unavailable(data);
    expect(statSync(path).size).toBe(0);
  });
});

// The directory itself: on a libSQL server there is none of ours.
describe.skipIf(TEST_LIBSQL)("the data directory", () => {
  test("serve and the reading commands refuse a missing directory, and the reading ones an empty one, writing nothing", async () => {
    const missing = join(freshDir(), "typo");
    const commands = [
      ["serve", "--listen", "127.0.0.1:0", "--allow-http"],
      ["stores", "list"],
      ["stores", "set", "shop1", "--plan", "pro"],
      ["keys", "list", "shop1"],
      ["mail", "list"],
      ["host-keys", "list"],
      ["host-keys", "delete", "1"],
    ];
    for (const command of commands) {
      const result = await runCli([...command, "--data", missing]);
      expect(result.code).toBe(1);
      expect(isOneCleanLine(result.stderr)).toBe(true);
      expect(result.stderr).toBe(
        `storeapi: no data directory at ${missing}; create one with storeapi stores add or storeapi load\n`,
      );
    }
    expect(existsSync(missing)).toBe(false);
    // An existing directory without a registry (a mistyped --data, /var/lib): looked at, not written.
    const empty = freshDir();
    for (const command of commands.slice(1)) {
      const result = await runCli([...command, "--data", empty]);
      expect([command, result.code, result.stderr]).toEqual([
        command,
        1,
        `storeapi: ${empty} holds no storeapi data (no platform.db); create it with storeapi stores add or storeapi load\n`,
      ]);
    }
    expect(readdirSync(empty)).toEqual([]);
    // A file where the directory, or a directory above it, should be: no advice to make one.
    const file = join(freshDir(), "a-file");
    writeFileSync(file, "");
    for (const dataDir of [file, join(file, "sub")])
      for (const command of commands) {
        const result = await runCli([...command, "--data", dataDir]);
        expect([command, result.code, result.stderr]).toEqual([
          command,
          1,
          `storeapi: ${dataDir} cannot be a data directory: ${file} is a file; give --data a directory\n`,
        ]);
      }
  }, 180_000); // 27 commands, each its own process: ~2 s apiece under Deno on a busy host

  test("no command makes a new platform.db where the old one is gone but its stores or WAL are there", async () => {
    const data = await loadedDataDir();
    const registry = join(data, "platform.db");
    const saved = `${data}-platform.db`;
    renameSync(registry, saved);
    for (const suffix of ["-wal", "-shm"]) rmSync(registry + suffix, { force: true });
    const commands = [
      ["serve", "--listen", "127.0.0.1:0", "--allow-http"],
      ["stores", "list"],
      ["keys", "list", "shop1"],
      ["load", writeFixture(freshDir(), [bare("newcomer")])],
    ];
    /** Every command refuses in one line, and leaves platform.db as it was (none, or empty). */
    const refuse = async (line: string) => {
      const before = existsSync(registry) ? statSync(registry).size : "none";
      for (const command of commands) {
        const result = await runCli([...command, "--data", data]);
        expect([command[0], result.code, result.stderr]).toEqual([
          command[0],
          1,
          `storeapi: ${line}\n`,
        ]);
        expect(existsSync(registry) ? statSync(registry).size : "none").toBe(before);
      }
    };
    const lost = (what: string) =>
      `${registry} is ${what}, but ${join(data, "stores")} holds stores: restore platform.db from a backup (a new one would register none of them)`;
    await refuse(lost("missing"));
    // An empty file (a copy cut short) is no registry either.
    writeFileSync(registry, "");
    await refuse(lost("empty"));
    rmSync(registry);
    // Without the stores: a WAL of the old one would be read into a new (or restored) file.
    renameSync(join(data, "stores"), `${data}-stores`);
    writeFileSync(`${registry}-wal`, "");
    await refuse(
      `${registry} is missing, but its ${registry}-wal is there: restore platform.db from a backup, or remove platform.db-wal and platform.db-shm to start afresh`,
    );
  }, 180_000); // a dozen commands, each its own process (36 s on a busy host)

  const modes = (dir: string): string[] => {
    const out: string[] = [];
    for (const name of [
      "",
      ...readdirSync(dir).map((n) => n),
      ...readdirSync(join(dir, "stores")).map((n) => join("stores", n)),
    ]) {
      const mode = statSync(join(dir, name)).mode & 0o777;
      out.push(`${name || "."} ${mode.toString(8)}`);
    }
    return out;
  };

  test("data files are private (0700 directories, 0600 files), an older install's too", async () => {
    const data = await loadedDataDir();
    for (const line of modes(data)) expect(line).toMatch(/^(\.|stores) 700$|^[^ ]+ 600$/);
    chmodSync(data, 0o755);
    chmodSync(join(data, "platform.db"), 0o644);
    chmodSync(join(data, "stores", "shop1.db"), 0o644);
    const mailDir = join(freshDir(), "mail");
    const server = await spawnServer(data, ["--mail-dir", mailDir]);
    try {
      expect(
        (
          await send(server.url, "/api/v1/products", {
            method: "POST",
            body: { name: "A", price: 1 },
          })
        ).status,
      ).toBe(201);
      const listed = modes(data);
      expect(listed).toContain("stores/shop1.db-wal 600");
      for (const line of listed) expect(line).toMatch(/^(\.|stores) 700$|^[^ ]+ 600$/);
      expect((statSync(mailDir).mode & 0o777).toString(8)).toBe("700");
    } finally {
      await server.signal("SIGTERM");
    }
  });

  test("a directory a command is given open to all (0777) is made owner only: a load into it, any command on it, a backup into it", async () => {
    const dir = freshDir();
    const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
    const data = join(dir, "data");
    mkdirSync(data, { mode: 0o777 });
    chmodSync(data, 0o777); // past the umask
    expect((await runCli(["load", writeFixture(dir, [testStore()]), "--data", data])).code).toBe(0);
    expect([mode(data), mode(join(data, "stores"))]).toEqual(["700", "700"]);
    chmodSync(data, 0o777);
    chmodSync(join(data, "stores"), 0o777);
    expect((await runCli(["keys", "list", "shop1", "--data", data])).code).toBe(0);
    expect([mode(data), mode(join(data, "stores"))]).toEqual(["700", "700"]);
    const backup = join(dir, "backup");
    mkdirSync(backup);
    chmodSync(backup, 0o777);
    expect((await runCli(["backup", backup, "--data", data])).code).toBe(0);
    expect([mode(backup), mode(join(backup, "stores"))]).toEqual(["700", "700"]);
  });

  test("a directory where a new store's file goes is refused, never removed with what it holds", async () => {
    const data = await loadedDataDir();
    const inTheWay = join(data, "stores", "shop9.db");
    mkdirSync(join(inTheWay, "sub"), { recursive: true });
    writeFileSync(join(inTheWay, "sub", "file"), "precious");
    const added = await runCli([
      ...["stores", "add", "shop9", "--domain", "shop9.test", "--plan", "free"],
      ...["--owner-email", "o@shop9.test", "--data", data],
    ]);
    expect([added.code, added.stderr]).toEqual([
      1,
      `storeapi: cannot remove ${inTheWay}: it is a directory\n`,
    ]);
    expect(readFileSync(join(inTheWay, "sub", "file"), "utf8")).toBe("precious");
  });

  test("a kill -9 during --mail-dir delivery leaves no temporary file behind the next start", async () => {
    const data = await loadedDataDir();
    const mailDir = join(freshDir(), "mail");
    const first = await spawnServer(data, ["--mail-dir", mailDir]);
    await first.signal("SIGTERM");
    const leftover = join(mailDir, ".shop1-7.eml.0123456789ab.tmp");
    writeFileSync(leftover, "half a message");
    writeFileSync(join(mailDir, "notes.tmp"), "not ours");
    const server = await spawnServer(data, ["--mail-dir", mailDir]);
    try {
      expect(existsSync(leftover)).toBe(false);
      expect(existsSync(join(mailDir, "notes.tmp"))).toBe(true);
    } finally {
      await server.signal("SIGTERM");
    }
  });
});

// The stores lock is a file in the data directory; nodes sharing a libSQL server have none (README).
describe.skipIf(TEST_LIBSQL)("two processes making stores at once", () => {
  const someOrders = (count: number) =>
    Array.from({ length: count }, (_, i) => ({
      id: i + 1,
      number: 1000 + i,
      status: 1,
      total: 10,
      customer: { id: null, name: "Bulk", email: "", phone: "", address: "" },
      createdAt: "2026-04-01T10:00:00+02:00",
    }));

  /** `storeapi load`, stopped (SIGSTOP, by itself) once it has built the fixture's first store. */
  async function loadStoppedAfterFirstStore(fixture: string, data: string, flags: string[] = []) {
    const load = Bun.spawn([...storeapiCommand(), "load", fixture, ...flags, "--data", data], {
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
      env: { ...process.env, STOREAPI_TEST_LOAD_STOP: "built-one" },
      timeout: 120_000,
    });
    const state = () => readFileSync(`/proc/${load.pid}/stat`, "utf8").split(") ")[1]?.[0];
    expect(await until(() => load.exitCode !== null || state() === "T")).toBe(true);
    expect(load.exitCode).toBe(null);
    return {
      /** Lets it go on; its exit status and the last line it wrote to stderr. */
      async finish() {
        load.kill("SIGCONT");
        const [stderr, code] = await Promise.all([new Response(load.stderr).text(), load.exited]);
        return { code, lastLine: stderr.trimEnd().split("\n").at(-1) };
      },
      kill() {
        load.kill("SIGCONT");
        load.kill("SIGKILL");
      },
    };
  }

  /** A fixture of `first`, then a second store (both built before either is registered). */
  const firstThenSecond = (dir: string, first: string, name?: string) =>
    writeFixture(
      dir,
      [bare(first), { ...bare("second"), orderStatuses: STATUSES, orders: someOrders(3) }],
      name,
    );

  const refusals = {
    "": () =>
      'fixture refused, nothing loaded: stores[0].slug: store "racer" already exists; pass --replace to load over it.',
    "--replace": (data: string) =>
      `a server is serving ${data}; stop it before load --replace (it would keep writing to the replaced files)`,
  };
  for (const [flag, refusal] of Object.entries(refusals))
    test(`a store the management API creates while a load${flag && ` ${flag}`} builds that slug: the load refuses, the created store is kept`, async () => {
      const dir = freshDir();
      const data = await loadedDataDir();
      const hostKey = await newHostKey(data);
      const server = await spawnServer(data);
      const call = (method: string, path: string, body?: unknown) =>
        manage(server.url, method, path, { key: hostKey, body });
      let load: Awaited<ReturnType<typeof loadStoppedAfterFirstStore>> | undefined;
      try {
        const fixture = firstThenSecond(dir, "racer");
        load = await loadStoppedAfterFirstStore(fixture, data, flag ? [flag] : []);
        const created = await call(
          "POST",
          "/stores",
          storeBody("racer", { domain: "racer.example.com" }),
        );
        expect(created.status).toBe(201);
        const key = await call("POST", "/stores/racer/keys", {
          name: "k",
          permissions: { products: "write" },
        });
        expect(key.status).toBe(201);
        expect(await load.finish()).toEqual({ code: 1, lastLine: `storeapi: ${refusal(data)}` });
        const kept = await call("GET", "/stores/racer");
        expect([kept.json.data.name, kept.json.data.domain]).toEqual([
          "Shop racer",
          "racer.example.com",
        ]);
        const products = await send(server.url, "/api/v1/products", {
          host: "racer.example.com",
          key: key.json.data.key,
        });
        expect(products.status).toBe(200);
        expect((await call("GET", "/stores/second")).status).toBe(404); // all or nothing
        expect(existsSync(join(data, "loading"))).toBe(false);
      } finally {
        load?.kill();
        await server.signal("SIGTERM");
      }
    });

  test("a load refused beside another load leaves that load's staged stores alone", async () => {
    const dir = freshDir();
    const data = await loadedDataDir();
    const first = await loadStoppedAfterFirstStore(firstThenSecond(dir, "early"), data);
    try {
      const refused = await runCli([
        "load",
        writeFixture(dir, [bare("shop1")], "again.json"),
        "--data",
        data,
      ]);
      expect(refused.stderr).toBe(
        'storeapi: fixture refused, nothing loaded: stores[0].slug: store "shop1" already exists; pass --replace to load over it.\n',
      );
      expect((await first.finish()).code).toBe(0);
    } finally {
      first.kill();
    }
    const stores = await runCli(["stores", "list", "--json", "--data", data]);
    expect(stores.json.map((store: { slug: string }) => store.slug)).toEqual([
      "early",
      "second",
      "shop1",
      "shop2",
    ]);
    const files = readdirSync(join(data, "stores")).filter((name) => name.endsWith(".db"));
    expect(files.sort()).toEqual(["early.db", "second.db", "shop1.db", "shop2.db"]);
  });

  test("a create or stores add waits while another process changes the stores; the server's gives up after 8 s with 503", async () => {
    const data = await loadedDataDir();
    const hostKey = await newHostKey(data);
    const server = await spawnServer(data);
    const { Database } = await import("bun:sqlite");
    const held = new Database(join(data, "stores.lock")); // as a load holds it while it registers
    held.run("PRAGMA locking_mode = EXCLUSIVE");
    held.run("BEGIN EXCLUSIVE");
    const addArgs = ["stores", "add", "waiter", "--domain", "waiter.test", "--plan", "growth"];
    const added = runCli([...addArgs, "--owner-email", "o@waiter.test", "--data", data]);
    let addDone = false;
    added.then(() => {
      addDone = true;
    });
    let holding = true;
    const release = () => {
      if (!holding) return;
      holding = false;
      held.run("ROLLBACK");
      held.close();
    };
    try {
      const busy = await manage(server.url, "POST", "/stores", {
        key: hostKey,
        body: storeBody("blocked"),
      });
      expect(busy.status).toBe(503);
      expect(busy.json.error).toEqual({
        code: "service_unavailable",
        message:
          "Another storeapi process is changing this server's stores (a load registering its stores, say; on a libSQL server, a node that stopped in the middle of such a change holds them for up to a minute); retry in a moment.",
      });
      expect(addDone).toBe(false);
      release();
      // The command said what it waited for, in one line, then went on.
      const add = await added;
      expect([add.code, add.stderr]).toEqual([
        0,
        `storeapi: waiting for another storeapi process changing the stores of ${data} (up to a minute; on a libSQL server a node that stopped in the middle of a change holds them that long)\n`,
      ]);
      const created = await manage(server.url, "POST", "/stores", {
        key: hostKey,
        body: storeBody("blocked"),
      });
      expect(created.status).toBe(201);
      const slugs = (await runCli(["stores", "list", "--json", "--data", data])).json.map(
        (s: { slug: string }) => s.slug,
      );
      expect(slugs).toEqual(["blocked", "shop1", "shop2", "waiter"]);
    } finally {
      release();
      await server.signal("SIGTERM");
    }
  });
});
