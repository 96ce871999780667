/** Issue 13, data safety: one server per directory, crash-atomic load, private files, no invented stores. */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KEYS, otherStore, scratchDirs, send, testStore } from "./helpers";
import { isOneCleanLine, runCli, spawnServer } from "./process";
import { TEST_LIBSQL } from "./sqld";

const freshDir = scratchDirs("storeapi-safety-");

function writeFixture(dir: string, stores: unknown[], name = "fixture.json"): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ stores }));
  return path;
}

/** A data directory (DIR/data) loaded with shop1 and shop2; returns its path. */
async function loadedDataDir(): Promise<string> {
  const dir = freshDir();
  const data = join(dir, "data");
  const loaded = await runCli([
    "load",
    writeFixture(dir, [testStore(), otherStore()]),
    "--data",
    data,
  ]);
  expect(loaded.code).toBe(0);
  return data;
}

const productNames = async (url: string, host = "shop1.test") =>
  (
    (await send(url, "/api/v1/products", { host })).json as { data: Array<{ name: string }> }
  ).data.map((p) => p.name);

// The serve and load locks are files in the data directory; on a libSQL server there are none.
describe.skipIf(TEST_LIBSQL)("one server per data directory", () => {
  test("a second serve refuses with one line; after kill -9 of the first a new one starts", async () => {
    const data = await loadedDataDir();
    const first = await spawnServer(data);
    try {
      const second = await runCli([
        "serve",
        "--data",
        data,
        "--listen",
        "127.0.0.1:0",
        "--allow-http",
      ]);
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

  for (const step of ["committed", "moved-one"]) {
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
});

// The directory itself: on a libSQL server there is none of ours.
describe.skipIf(TEST_LIBSQL)("the data directory", () => {
  test("serve and the reading commands refuse a missing directory and do not create it", async () => {
    const missing = join(freshDir(), "typo");
    const commands = [
      ["serve", "--listen", "127.0.0.1:0", "--allow-http"],
      ["stores", "list"],
      ["stores", "set", "shop1", "--plan", "pro"],
      ["keys", "list", "shop1"],
      ["mail", "list"],
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
  });

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
