import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { lookup } from "node:dns/promises";
import { existsSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { LibsqlLocation, namespaceFetch } from "../src/db/location";
import { KEYS, otherStore, send, tempDir, testStore, until, withoutProgress } from "./helpers";
import { manage, storeBody } from "./manage-support";
import { runCli, type ServerProcess, serverRunsOnDeno, spawnServer } from "./process";
import { type Sqld, startSqld, TEST_LIBSQL } from "./sqld";

let sqld: Sqld;
let dir: string;
beforeAll(async () => {
  dir = tempDir("storeapi-libsql-");
  if (!TEST_LIBSQL) sqld = await startSqld();
});
afterAll(async () => {
  await sqld?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A command against the libSQL server; `--data` points at an empty directory that must stay empty. */
const run = (...args: string[]) => runCli([...args, ...sqld.flags, "--data", join(dir, "data")]);

async function namespaceExists(namespace: string): Promise<boolean> {
  return (await fetch(`${sqld.adminUrl}/v1/namespaces/${namespace}/config`)).status === 200;
}

/** The server under test is the Deno launcher: it refuses --libsql-url (see src/runtime/runtime.ts fetchSetsHost). */
const UNDER_DENO = serverRunsOnDeno();

describe.if(UNDER_DENO)("libSQL under Deno", () => {
  test("serve --libsql-url refuses with one line: Deno's fetch cannot choose sqld's namespace", async () => {
    const result = await runCli(
      [
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--allow-http",
        "--data",
        join(dir, "deno"),
        ...sqld.flags,
      ],
      {
        underTest: true,
      },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^storeapi: --libsql-url needs the compiled storeapi: under Deno [\d.]+ fetch cannot choose sqld's namespace by the Host header\n$/,
    );
  });
});

// Starts its own sqld: under STOREAPI_TEST_LIBSQL the harness would add a second one.
describe.skipIf(TEST_LIBSQL || UNDER_DENO)("every database on a libSQL server", () => {
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.signal("SIGTERM");
  });

  test("load, stores, keys, serve and mail work as on files, in namespaces platform and store-{slug}", async () => {
    const fixture = join(dir, "fixture.json");
    writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
    const loaded = await run("load", fixture, "--json");
    expect(loaded.stderr).toBe("");
    expect(loaded.code).toBe(0);
    expect(await namespaceExists("platform")).toBe(true);
    expect(await namespaceExists("store-shop1")).toBe(true);

    const added = await run(
      "stores",
      "add",
      "shop2",
      "--domain",
      "shop2.example.com",
      "--plan",
      "free",
      "--owner-email",
      "o@shop2.example.com",
    );
    expect(added.stdout).toBe(
      "created store shop2 at https://shop2.example.com/api/v1 (plan free)\n",
    );
    expect(await namespaceExists("store-shop2")).toBe(true);
    expect((await run("stores", "set", "shop2", "--plan", "pro")).code).toBe(0);
    const list = await run("stores", "list", "--json");
    expect(list.json.map((s: { slug: string; plan: string }) => [s.slug, s.plan])).toEqual([
      ["shop1", "growth"],
      ["shop2", "pro"],
    ]);

    server = await spawnServer(join(dir, "data"), sqld.flags);
    const created = await send(server.url, "/api/v1/products", {
      method: "POST",
      body: { name: "Mug", price: 12.5 },
    });
    expect(created.status).toBe(201);
    const read = await send(server.url, `/api/v1/products/${created.json.data.id}`);
    expect(read.json.data).toMatchObject({ name: "Mug", price: 12.5 });

    // A key made by the CLI works on the running server within a second (the registry re-reads).
    const key = await run(
      "keys",
      "create",
      "shop2",
      "--name",
      "ci",
      "--products",
      "read",
      "--json",
    );
    expect(key.code).toBe(0);
    let answer = await send(server.url, "/api/v1/products", {
      host: "shop2.example.com",
      key: key.json.key,
    });
    for (let i = 0; i < 50 && answer.status !== 200; i++) {
      await Bun.sleep(100);
      answer = await send(server.url, "/api/v1/products", {
        host: "shop2.example.com",
        key: key.json.key,
      });
    }
    expect(answer.status).toBe(200);
    expect(answer.json.data).toEqual([]);
    expect(
      (await run("keys", "list", "shop2", "--json")).json.map((k: { name: string }) => k.name),
    ).toEqual(["ci"]);

    // The key notice is queued in shop2's namespace, seen by `mail list`.
    const mail = await run("mail", "list", "--store", "shop2", "--json");
    expect(mail.json.map((m: { kind: string; to: string }) => [m.kind, m.to])).toEqual([
      ["key_created", "o@shop2.example.com"],
    ]);

    // Nothing was written under --data.
    expect(existsSync(join(dir, "data", "platform.db"))).toBe(false);
    expect(existsSync(join(dir, "data", "stores"))).toBe(false);
  });

  test("the management API creates a store's namespace; deleting the store keeps its namespace, unregistered", async () => {
    const hostKey = (await run("host-keys", "create", "--name", "ci", "--json")).json.key;
    const call = (method: string, path: string, body?: unknown) =>
      manage(server?.url ?? "", method, path, { key: hostKey, body });
    // The running server sees the new host key within a second (the registry re-reads).
    let created = await call("POST", "/stores", storeBody("shop4"));
    for (let i = 0; i < 50 && created.status === 401; i++) {
      await Bun.sleep(100);
      created = await call("POST", "/stores", storeBody("shop4"));
    }
    expect([created.status, created.json.data?.slug]).toEqual([201, "shop4"]);
    expect(await namespaceExists("store-shop4")).toBe(true);
    const served = await send(server?.url ?? "", "/api/v1/products", {
      host: "shop4.example.com",
      key: null,
    });
    expect(served.status).toBe(401); // a known store asking for a key, not a 404
    expect((await call("DELETE", "/stores/shop4")).status).toBe(200);
    expect(
      (await run("stores", "list", "--json")).json.map((s: { slug: string }) => s.slug),
    ).toEqual(["shop1", "shop2"]);
    expect(await namespaceExists("store-shop4")).toBe(true);
  });

  test("backup copies the server's databases into a data directory that serves the same; admin-link works", async () => {
    const copy = join(dir, "backup");
    const backedUp = await run("backup", copy);
    expect([backedUp.code, withoutProgress(backedUp.stderr)]).toEqual([0, ""]);
    expect(backedUp.stdout).toStartWith("backed up platform.db and 2 stores");
    const onServer = await send(server?.url ?? "", "/api/v1/products");
    const fileServer = await spawnServer(copy);
    try {
      expect((await send(fileServer.url, "/api/v1/products")).json).toEqual(onServer.json);
    } finally {
      await fileServer.signal("SIGTERM");
    }
    const link = await run("admin-link", "shop1", "--origin", "http://127.0.0.1:8080");
    expect([link.code, link.stdout]).toEqual([
      0,
      expect.stringMatching(/^http:\/\/127\.0\.0\.1:8080\/\S+\n$/),
    ]);
  });

  test("a second load of the same store is refused, and --replace is refused on a server", async () => {
    const fixture = join(dir, "again.json");
    writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
    const again = await run("load", fixture);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      'storeapi: fixture refused, nothing loaded: stores[0].slug: store "shop1" already exists; on a libSQL server a store is not loaded over: delete it first (DELETE /manage/v1/stores/shop1) or load it under another slug.\n',
    );
    const replace = await run("load", fixture, "--replace");
    expect(replace.code).toBe(1);
    expect(replace.stderr).toContain("--replace is not supported on a libSQL server");
  });

  test("an unregistered namespace a crashed load left behind is replaced by the next load", async () => {
    await fetch(`${sqld.adminUrl}/v1/namespaces/store-shop3/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    const leftover = createClient({
      url: sqld.url,
      fetch: namespaceFetch("store-shop3", sqld.url),
    });
    await leftover.execute("CREATE TABLE half_loaded (x)");
    leftover.close();
    const fixture = join(dir, "shop3.json");
    writeFileSync(
      fixture,
      JSON.stringify({ stores: [testStore({ slug: "shop3", domain: "shop3.test" })] }),
    );
    const loaded = await run("load", fixture);
    expect(loaded.stderr).toBe("");
    expect(loaded.code).toBe(0);
    const fresh = createClient({ url: sqld.url, fetch: namespaceFetch("store-shop3", sqld.url) });
    const tables = await fresh.execute("SELECT name FROM sqlite_master WHERE name = 'half_loaded'");
    fresh.close();
    expect(tables.rows).toEqual([]);
    expect(
      (await run("stores", "list", "--json")).json.map((s: { slug: string }) => s.slug),
    ).toEqual(["shop1", "shop2", "shop3"]);
  });

  test("creates take turns across nodes through a lease in the registry; a dead holder's lease runs out", async () => {
    const hostKey = (await run("host-keys", "create", "--name", "lease", "--json")).json.key;
    const call = (method: string, path: string, body?: unknown) =>
      manage(server?.url ?? "", method, path, { key: hostKey, body });
    const registry = createClient({ url: sqld.url, fetch: namespaceFetch("platform", sqld.url) });
    const lease = async () =>
      (await registry.execute("SELECT value FROM meta WHERE key = 'stores_lease'")).rows.map(
        (row) => row.value,
      );
    try {
      // Another node is creating a store, for a while yet.
      const theirs = `${Date.now() + 600_000} another-node`;
      await registry.execute({
        sql: "INSERT INTO meta (key, value) VALUES ('stores_lease', ?)",
        args: [theirs],
      });
      let busy = await call("POST", "/stores", storeBody("leased"));
      for (let i = 0; i < 50 && busy.status === 401; i++) {
        await Bun.sleep(100); // the server sees the new host key within a second
        busy = await call("POST", "/stores", storeBody("leased"));
      }
      expect([busy.status, busy.json.error.code]).toEqual([503, "service_unavailable"]);
      expect(await lease()).toEqual([theirs]);
      expect(await namespaceExists("store-leased")).toBe(false);
      // That node died: its lease ran out, and the next create takes it and gives it back.
      await registry.execute({
        sql: "UPDATE meta SET value = ? WHERE key = 'stores_lease'",
        args: [`${Date.now() - 1} another-node`],
      });
      const created = await call("POST", "/stores", storeBody("leased"));
      expect([created.status, created.json.data.slug]).toEqual([201, "leased"]);
      expect(await lease()).toEqual([]);
    } finally {
      registry.close();
    }
  });
});

describe.skipIf(TEST_LIBSQL || UNDER_DENO)("store namespaces", () => {
  test("the missing ones are found with the admin API, and none are without it", async () => {
    const location = new LibsqlLocation({
      url: sqld.url,
      adminUrl: sqld.adminUrl,
      authToken: null,
    });
    await location.createStore("present1");
    try {
      expect(await location.missingStores(["present1", "absent1"])).toEqual(["absent1"]);
    } finally {
      await location.deleteStore("present1");
    }
    const serving = new LibsqlLocation({ url: sqld.url, adminUrl: null, authToken: null });
    expect(await serving.missingStores(["absent1"])).toEqual([]);
  });
});

/** `stores add SLUG` with the rest a test does not care about. */
const addStore = (slug: string) => [
  "stores",
  "add",
  slug,
  "--domain",
  `${slug}.test`,
  "--plan",
  "growth",
  "--owner-email",
  `owner@${slug}.test`,
];

// sqld answers 404 for a namespace it has just made while --max-active-namespaces others are
// active (100 by default): a load of 300 stores stopped at about the 150th, and the line
// blamed the two addresses. (Namespaces made before are served past the limit.)
describe.skipIf(TEST_LIBSQL || UNDER_DENO)("a libSQL server that serves few namespaces", () => {
  test("a load past its limit names the flag; with room it makes every store", async () => {
    const stores = Array.from({ length: 12 }, (_, i) =>
      testStore({ slug: `f${i}`, domain: `f${i}.test`, ownerEmail: `owner@f${i}.test` }),
    );
    const fixture = join(dir, "few-active.json");
    writeFileSync(fixture, JSON.stringify({ stores }));
    const load = async (active: string) => {
      const server = await startSqld({
        replicas: false,
        args: ["--max-active-namespaces", active],
      });
      try {
        const data = join(dir, `few-active-${active}`);
        const loaded = await runCli(["load", fixture, ...server.flags, "--data", data]);
        const listed = await runCli(["stores", "list", "--json", ...server.flags, "--data", data]);
        return { ...loaded, server, stores: listed.json?.length };
      } finally {
        await server.stop();
      }
    };
    const tight = await load("5");
    expect(tight.code).toBe(1);
    expect(tight.stderr).toMatch(
      new RegExp(
        `^storeapi: the libSQL server at ${tight.server.url} does not serve namespace store-f\\d+, though its admin API at ${tight.server.adminUrl} has it: sqld answers so while --max-active-namespaces others are active \\(100 by default; start it with more than the number of stores\\), or the two addresses name different servers\n$`,
      ),
    );
    expect(tight.stores).toBe(0); // all or nothing
    const roomy = await load("20");
    expect([roomy.code, roomy.stores]).toEqual([0, 12]);
  }, 120_000);
});

describe.skipIf(TEST_LIBSQL || UNDER_DENO)("a lost registry on a libSQL server", () => {
  test("a registry made again after platform is lost refuses to replace a store namespace of the old one", async () => {
    const own = await startSqld({ replicas: false });
    try {
      const data = join(dir, "lost-registry-data");
      const cli = (...args: string[]) => runCli([...args, ...own.flags, "--data", data]);
      const fixture = join(dir, "lost-registry.json");
      writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
      expect((await cli("load", fixture)).code).toBe(0);
      const customers = async () => {
        const client = createClient({
          url: own.url,
          fetch: namespaceFetch("store-shop1", own.url),
        });
        try {
          const sql = "SELECT (SELECT count(*) FROM api_keys) + (SELECT count(*) FROM orders) AS n";
          return (await client.execute(sql)).rows[0].n;
        } finally {
          client.close();
        }
      };
      const before = await customers();
      expect(Number(before)).toBeGreaterThan(0);

      // The registry is lost; the next command makes an empty one.
      const lost = await fetch(`${own.adminUrl}/v1/namespaces/platform`, { method: "DELETE" });
      expect(lost.status).toBe(200);
      expect((await cli("stores", "list", "--json")).json).toEqual([]);
      const add = await cli(...addStore("shop1"));
      expect(add.code).toBe(1);
      expect(add.stderr).toStartWith(
        `storeapi: namespace store-shop1 on ${own.url} holds a store that this registry (namespace platform) did not make: if platform was lost or replaced, restore it from a backup;`,
      );
      expect(await customers()).toBe(before);

      // Other slugs are added as usual.
      const other = await cli(...addStore("shop9"));
      expect(other.code).toBe(0);
    } finally {
      await own.stop();
    }
  });
});

describe.skipIf(TEST_LIBSQL || UNDER_DENO)("an admin API with a key", () => {
  test("--libsql-admin-auth-key reaches sqld's admin API (--admin-auth-key); without it the refusal says which flag", async () => {
    const keyed = await startSqld({ replicas: false, args: ["--admin-auth-key", "adm1nKey"] });
    try {
      const data = join(dir, "admin-key-data");
      const add = (slug: string, ...more: string[]) =>
        runCli([...addStore(slug), ...keyed.flags, "--data", data, ...more]);
      const refused = await add("shop1");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toStartWith(
        "storeapi: the libSQL admin API refused GET namespace platform: 401 ",
      );
      expect(refused.stderr).toEndWith(
        " (its key: --libsql-admin-auth-key, sqld's --admin-auth-key)\n",
      );
      expect(refused.stderr.split("\n")).toHaveLength(2);
      const added = await add("shop1", "--libsql-admin-auth-key", "adm1nKey");
      expect([added.code, added.stderr]).toEqual([0, ""]);
      const listed = await runCli([
        "stores",
        "list",
        "--json",
        ...keyed.flags,
        "--data",
        data,
        "--libsql-admin-auth-key",
        "adm1nKey",
      ]);
      expect(listed.json.map((s: { slug: string }) => s.slug)).toEqual(["shop1"]);
    } finally {
      await keyed.stop();
    }
  });
});

describe.skipIf(TEST_LIBSQL || UNDER_DENO)("a libSQL server that takes only signed tokens", () => {
  test("a missing or wrong --libsql-auth-token is named in one line, not as the server's HTTP 401", async () => {
    const pair = generateKeyPairSync("ed25519");
    const keyFile = join(dir, "jwt.pem");
    writeFileSync(keyFile, pair.publicKey.export({ type: "spki", format: "pem" }));
    const signed = await startSqld({ replicas: false, args: ["--auth-jwt-key-file", keyFile] });
    try {
      const list = (...more: string[]) =>
        runCli(["stores", "list", ...signed.flags, "--data", join(dir, "jwt-data"), ...more]);
      const line =
        "storeapi: the libSQL server refused the auth token (401): give the one it takes with --libsql-auth-token or STOREAPI_LIBSQL_AUTH_TOKEN\n";
      const without = await list();
      expect([without.code, without.stderr]).toEqual([1, line]);
      const wrong = await list("--libsql-auth-token", "not-a-token");
      expect([wrong.code, wrong.stderr]).toEqual([1, line]);
    } finally {
      await signed.stop();
    }
  });
});

describe.skipIf(TEST_LIBSQL || UNDER_DENO)("migrate-to-libsql", () => {
  test("a file data directory moves onto an empty server and answers the same there", async () => {
    const files = join(dir, "files");
    const fixture = join(dir, "move.json");
    const orders = Array.from({ length: 5 }, (_, i) => ({
      id: i + 1,
      number: 2001 + i,
      status: 1,
      total: 10 + i,
      customer: {
        id: null,
        name: `Buyer ${i}`,
        email: `b${i}@example.test`,
        phone: "",
        address: "",
      },
      createdAt: `2026-01-0${i + 1}`,
    }));
    writeFileSync(
      fixture,
      JSON.stringify({
        stores: [testStore({ orders, products: [{ name: "Tea", price: 4 }] }), otherStore()],
      }),
    );
    const loaded = await runCli(["load", fixture, "--data", files]);
    expect([loaded.code, loaded.stderr]).toEqual([0, ""]);
    const key = await runCli([
      "keys",
      "create",
      "shop1",
      "--name",
      "moved",
      "--orders",
      "read",
      "--json",
      "--data",
      files,
    ]);

    const fileServer = await spawnServer(files);
    const page = "/api/v1/orders?limit=2";
    const before = await send(fileServer.url, page, { key: key.json.key });
    const next = await send(
      fileServer.url,
      `/api/v1/orders?limit=2&cursor=${before.json.nextCursor}`,
      { key: key.json.key },
    );
    expect(before.status).toBe(200);

    const empty = await startSqld();
    try {
      // Not from under a running server: what it wrote after the copy would be lost.
      const busy = await runCli(["migrate-to-libsql", "--data", files, ...empty.flags]);
      expect([busy.code, busy.stdout, busy.stderr]).toEqual([
        1,
        "",
        `storeapi: a server is serving ${files}; stop it first (what it wrote after the copy would be lost), or migrate a backup of it\n`,
      ]);
      expect((await send(fileServer.url, page, { key: key.json.key })).json).toEqual(before.json);
      expect(await fileServer.signal("SIGTERM")).toBe(0);

      const moved = await runCli(["migrate-to-libsql", "--data", files, ...empty.flags]);
      expect([moved.code, moved.stderr, moved.stdout]).toEqual([
        0,
        "",
        `copied 2 stores (shop1, shop2) to ${empty.url}\n`,
      ]);
      const server = await spawnServer(join(dir, "unused"), empty.flags);
      try {
        // Same rows, same key, and a cursor signed on files still reads on the server (the secret moved too).
        expect((await send(server.url, page, { key: key.json.key })).json).toEqual(before.json);
        expect(
          (
            await send(server.url, `/api/v1/orders?limit=2&cursor=${before.json.nextCursor}`, {
              key: key.json.key,
            })
          ).json,
        ).toEqual(next.json);
        expect(
          (await send(server.url, "/api/v1/products")).json.data.map(
            (p: { name: string }) => p.name,
          ),
        ).toEqual(["Tea"]);
      } finally {
        await server.signal("SIGTERM");
      }
      // The registry keeps the name its namespaces carry (not the data directory's), so a
      // store deleted and made again there replaces its own namespace.
      const registryOf = async (namespace: string) => {
        const client = createClient({
          url: empty.url,
          fetch: namespaceFetch(namespace, empty.url),
        });
        try {
          const sql = "SELECT value FROM meta WHERE key = 'registry'";
          return (await client.execute(sql)).rows[0]?.value;
        } finally {
          client.close();
        }
      };
      const name = await registryOf("platform");
      expect(name).toMatch(/^[0-9a-f]{32}$/);
      expect(await registryOf("store-shop1")).toBe(name);
      const again = await runCli(["migrate-to-libsql", "--data", files, ...empty.flags]);
      expect([again.code, again.stderr]).toEqual([
        1,
        "storeapi: the libSQL server already has stores (shop1, shop2); migrate-to-libsql fills an empty one\n",
      ]);

      // A backup of that server moves onto another: its stores name the first server's
      // registry, and each new namespace keeps its own (it was "UNIQUE constraint failed").
      const copy = join(dir, "server-backup");
      expect((await runCli(["backup", copy, ...empty.flags])).code).toBe(0);
      const second = await startSqld();
      try {
        const restored = await runCli(["migrate-to-libsql", "--data", copy, ...second.flags]);
        expect([restored.code, restored.stderr, restored.stdout]).toEqual([
          0,
          "",
          `copied 2 stores (shop1, shop2) to ${second.url}\n`,
        ]);
        const server = await spawnServer(join(dir, "unused-2"), second.flags);
        try {
          expect((await send(server.url, page, { key: key.json.key })).json).toEqual(before.json);
        } finally {
          await server.signal("SIGTERM");
        }
      } finally {
        await second.stop();
      }
    } finally {
      await empty.stop();
    }
  }, 120_000);

  test("many stores: progress on stderr; the summary and a refusal count them without naming each", async () => {
    const files = join(dir, "many-files");
    const fixture = join(dir, "many.json");
    const stores = Array.from({ length: 60 }, (_, i) =>
      testStore({ slug: `m${i}`, domain: `m${i}.test`, ownerEmail: `owner@m${i}.test`, keys: [] }),
    );
    writeFileSync(fixture, JSON.stringify({ stores }));
    expect((await runCli(["load", fixture, "--data", files])).code).toBe(0);
    const empty = await startSqld();
    try {
      const moved = await runCli(["migrate-to-libsql", "--data", files, ...empty.flags]);
      expect([moved.code, moved.stdout]).toEqual([0, `copied 60 stores to ${empty.url}\n`]);
      expect(moved.stderr.split("\n").at(-2)).toBe("migrate: stores copied: 60/60");
      const again = await runCli(["migrate-to-libsql", "--data", files, ...empty.flags]);
      const named = stores
        .map((s) => s.slug)
        .sort()
        .slice(0, 10)
        .join(", ");
      expect([again.code, again.stderr]).toEqual([
        1,
        `storeapi: the libSQL server already has stores (${named} and 50 more); migrate-to-libsql fills an empty one\n`,
      ]);
    } finally {
      await empty.stop();
    }
  }, 60_000);

  test("a registered store whose file is missing stops it before anything is copied", async () => {
    const files = join(dir, "missing-files");
    const fixture = join(dir, "missing.json");
    writeFileSync(fixture, JSON.stringify({ stores: [testStore(), otherStore()] }));
    expect((await runCli(["load", fixture, "--data", files])).code).toBe(0);
    rmSync(join(files, "stores", "shop2.db"));
    const empty = await startSqld();
    try {
      const refused = await runCli(["migrate-to-libsql", "--data", files, ...empty.flags]);
      expect([refused.code, refused.stdout, refused.stderr]).toEqual([
        1,
        "",
        `storeapi: ${join(files, "stores", "shop2.db")} is missing: store "shop2" is registered but has no database; restore the file from a backup\n`,
      ]);
      expect(readdirSync(join(files, "stores")).filter((name) => name.startsWith("shop2"))).toEqual(
        [],
      );
      const onServer = await runCli(["stores", "list", "--json", ...empty.flags]);
      expect(onServer.json).toEqual([]);
    } finally {
      await empty.stop();
    }
  });

  test("without --libsql-url it is a usage error", async () => {
    const result = await runCli(["migrate-to-libsql", "--data", join(dir, "files")]);
    expect([result.code, result.stderr]).toEqual([
      2,
      "storeapi: migrate-to-libsql needs --libsql-url (and --libsql-admin-url): the server to copy onto\n",
    ]);
  });
});

describe.skipIf(TEST_LIBSQL || UNDER_DENO)("libSQL flags", () => {
  test("--libsql-admin-url without --libsql-url is a usage error", async () => {
    const result = await runCli([
      "stores",
      "list",
      "--libsql-admin-url",
      "http://127.0.0.1:1",
      "--data",
      join(dir, "x"),
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--libsql-admin-url needs --libsql-url");
  });

  test("a URL that is not http, https or libsql, or carries a secret, is a usage error naming where it came from", async () => {
    const flag = await runCli(["stores", "list", "--libsql-url", "ws://127.0.0.1:1"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain(
      '--libsql-url must be an http://, https:// or libsql:// URL, not "ws://127.0.0.1:1"',
    );
    const env = await runCli(["stores", "list"], { env: { STOREAPI_LIBSQL_URL: "nonsense" } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain(
      'STOREAPI_LIBSQL_URL must be an http://, https:// or libsql:// URL, not "nonsense"',
    );
    // An unset shell variable (`STOREAPI_LIBSQL_URL=$UNSET`) must not mean the data directory.
    const empty = await runCli(["stores", "list", "--data", join(dir, "never-made")], {
      env: { STOREAPI_LIBSQL_URL: "" },
    });
    expect([empty.code, empty.stderr]).toEqual([
      2,
      "storeapi: STOREAPI_LIBSQL_URL is empty; give a value or leave it unset\n",
    ]);
    // A secret in the URL would be repeated by every message naming the server.
    const secrets = [
      ["--libsql-url", "http://admin:s3cret@127.0.0.1:1", "--libsql-auth-token"],
      ["--libsql-url", "libsql://127.0.0.1:1?authToken=s3cret", "--libsql-auth-token"],
      ["--libsql-admin-url", "http://:s3cret@127.0.0.1:2", "--libsql-admin-auth-key"],
    ];
    for (const [flag, url, instead] of secrets) {
      const refused = await runCli([
        "stores",
        "list",
        ...(flag === "--libsql-url" ? [] : ["--libsql-url", "http://127.0.0.1:1"]),
        flag,
        url,
      ]);
      expect([refused.code, refused.stderr]).toEqual([
        2,
        `storeapi: ${flag} must not carry a user, password or token (messages would show it); give the secret with ${instead} or its environment variable\n`,
      ]);
    }
    // What the libSQL client refuses is bad usage, said before anything is opened.
    const refusedUrls = [
      ["http://127.0.0.1:1/#SECRET", "--libsql-url must not end in a #fragment"],
      [
        "http://127.0.0.1:1/?token=s3cret",
        '--libsql-url takes no query parameter but tls=0 or tls=1, not "token"',
      ],
      [
        "libsql://127.0.0.1:1?tls=2",
        '--libsql-url takes no query parameter but tls=0 or tls=1, not "tls=2"',
      ],
      [
        "http://127.0.0.1:1?tls=0;authToken=s3cret",
        '--libsql-url takes no query parameter but tls=0 or tls=1, not "tls"',
      ],
      ["http://127.0.0.1:1/#", "--libsql-url must not end in a #fragment"],
      [
        "http://127.0.0.1:1?tls=1",
        "--libsql-url is http://, which tls=1 cannot make secure: use https://",
      ],
      [
        "ws://admin:s3cret@127.0.0.1:1",
        "--libsql-url must not carry a user, password or token (messages would show it); give the secret with --libsql-auth-token or its environment variable",
      ],
    ];
    for (const [url, line] of refusedUrls) {
      const refused = await runCli(["stores", "list", "--libsql-url", url]);
      expect([refused.code, refused.stderr]).toEqual([2, `storeapi: ${line}\n`]);
    }
  });

  test("demo is files only and refuses --libsql-url", async () => {
    const result = await runCli([
      "demo",
      "--listen",
      "127.0.0.1:0",
      "--data",
      join(dir, "demo"),
      "--libsql-url",
      sqld.url,
    ]);
    expect([result.code, result.stderr]).toEqual([
      2,
      "storeapi: demo keeps its data in files under --data; drop --libsql-url\n",
    ]);
  });

  test("a server without the registry namespace says how to make it", async () => {
    const empty = await startSqld();
    try {
      const result = await runCli(["stores", "list", "--libsql-url", empty.url]);
      expect([result.code, result.stderr]).toEqual([
        1,
        `storeapi: the libSQL server at ${empty.url} has no namespace platform; a command given --libsql-admin-url creates it\n`,
      ]);
    } finally {
      await empty.stop();
    }
  });

  test("the admin API's address given as --libsql-url is named as not a libSQL server's API", async () => {
    const swapped = await runCli(["stores", "list", "--libsql-url", sqld.adminUrl]);
    expect([swapped.code, swapped.stderr]).toEqual([
      1,
      `storeapi: ${sqld.adminUrl} did not answer as a libSQL server's API (is --libsql-url the admin API's address, or something else's?)\n`,
    ]);
  });

  test("a server or admin API that refuses the connection is named, in our words", async () => {
    // A port nobody listens on: taken and given back.
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const url = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    const refused = "did not answer: the connection was refused (is it running, on that address?)";
    const server = await runCli(["stores", "list", "--libsql-url", url]);
    expect([server.code, server.stderr]).toEqual([
      1,
      `storeapi: the libSQL server at ${url} ${refused}\n`,
    ]);
    const admin = await runCli([
      ...["stores", "add", "shop9", "--domain", "shop9.example.com", "--plan", "growth"],
      ...["--owner-email", "o@shop9.example.com", "--libsql-url", sqld.url],
      ...["--libsql-admin-url", url],
    ]);
    expect([admin.code, admin.stderr]).toEqual([
      1,
      `storeapi: the libSQL server's admin API at ${url} ${refused}\n`,
    ]);
  });

  test("adding a store without the admin API says what is missing", async () => {
    const result = await runCli([
      "stores",
      "add",
      "shop9",
      "--domain",
      "shop9.example.com",
      "--plan",
      "free",
      "--owner-email",
      "o@x.example.com",
      "--libsql-url",
      sqld.url,
    ]);
    expect([result.code, result.stderr]).toEqual([
      1,
      "storeapi: --libsql-admin-url is needed to create or delete databases on the libSQL server\n",
    ]);
  });
});

const isReplication = (url: URL) => url.pathname.includes("ReplicationLog");

/**
 * A proxy in front of sqld that counts the requests it passes on (statements, and the
 * replication API's), after `intercept` may hold one or answer it itself (null: pass it on).
 */
function sqldProxy(
  upstreamUrl: string,
  intercept: (url: URL) => Promise<Response | null> | Response | null,
) {
  const upstream = new URL(upstreamUrl);
  const passed = { statements: 0, replication: 0 };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const own = await intercept(url);
      if (own) return own;
      passed[isReplication(url) ? "replication" : "statements"]++;
      url.port = upstream.port;
      const answer = await fetch(url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        redirect: "manual",
      });
      // fetch has decoded the body already.
      const headers = new Headers(answer.headers);
      headers.delete("content-encoding");
      headers.delete("content-length");
      return new Response(answer.body, { status: answer.status, headers });
    },
  });
  return { url: `http://localhost:${server.port}`, passed, stop: () => server.stop(true) };
}

/** Whether `*.localhost` resolves here (systemd's resolver or Debian's libnss-myhostname; CI installs it). */
async function localhostNamesResolve(): Promise<boolean> {
  try {
    await lookup("store-probe.localhost");
    return true;
  } catch {
    return false;
  }
}
const namesResolve = await localhostNamesResolve();
if (!namesResolve && process.env.STOREAPI_REQUIRE_LOCALHOST_NAMES)
  throw new Error(
    "STOREAPI_REQUIRE_LOCALHOST_NAMES is set but store-probe.localhost does not resolve",
  );

describe.skipIf(TEST_LIBSQL || UNDER_DENO || !namesResolve)("reads from embedded replicas", () => {
  let replicated: Sqld;
  let server: ServerProcess | undefined;
  const data = () => join(dir, "replica-node");
  afterAll(async () => {
    await server?.signal("SIGTERM");
    await replicated?.stop();
  });

  /** Store shop1 through `url`, its request reads from a replica kept in `dir/{name}`. */
  async function shopWithReplica(url: string, name: string) {
    const location = new LibsqlLocation({ url, adminUrl: replicated.adminUrl, authToken: null });
    const replicas = join(dir, name);
    location.keepReplicasIn(replicas);
    return { db: await location.openStore("shop1"), replicas };
  }

  /** One SQL statement straight to the store's namespace: a write made by someone else. */
  async function writeElsewhere(sql: string): Promise<void> {
    const client = createClient({
      url: replicated.url,
      fetch: namespaceFetch("store-shop1", replicated.url),
    });
    try {
      await client.execute(sql);
    } finally {
      client.close();
    }
  }

  test("a node reads its own writes at once and another writer's soon after (within a second); replicas are private files under --data", async () => {
    replicated = await startSqld({ replicas: true });
    const fixture = join(dir, "replica-fixture.json");
    writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
    const loaded = await runCli(["load", fixture, ...replicated.flags, "--data", data()]);
    expect([loaded.code, loaded.stderr]).toEqual([0, ""]);
    server = await spawnServer(data(), replicated.serveFlags);

    const created = await send(server.url, "/api/v1/products", {
      method: "POST",
      body: { name: "Mug", price: 12.5 },
    });
    expect(created.status).toBe(201);
    const id = created.json.data.id;
    expect((await send(server.url, `/api/v1/products/${id}`)).json.data.name).toBe("Mug");
    const patched = await send(server.url, `/api/v1/products/${id}`, {
      method: "PATCH",
      body: { name: "Cup" },
    });
    expect(patched.status).toBe(200);
    expect((await send(server.url, `/api/v1/products/${id}`)).json.data.name).toBe("Cup");

    const replicas = join(data(), "replicas");
    expect(await until(() => readdirSync(replicas).includes("store-shop1.db"))).toBe(true);
    expect(statSync(replicas).mode & 0o777).toBe(0o700);
    expect(statSync(join(replicas, "store-shop1.db")).mode & 0o777).toBe(0o600);

    await writeElsewhere(`UPDATE products SET name = 'Bowl' WHERE id = ${id}`);
    const writtenAt = Date.now();
    let name = "";
    while (Date.now() - writtenAt < 10_000) {
      name = (await send(server.url, `/api/v1/products/${id}`)).json.data.name;
      if (name === "Bowl") break;
      await Bun.sleep(50);
    }
    expect(name).toBe("Bowl");

    // A stopped node leaves no replica behind.
    await server.signal("SIGTERM");
    server = undefined;
    expect(readdirSync(replicas)).toEqual([]);
  });

  test("a store's replica is made at its first request read, not for the primary's work, and removed at close", async () => {
    const { db, replicas } = await shopWithReplica(replicated.url, "replica-unit");
    const count = (await db.get<{ n: number }>("SELECT count(*) AS n FROM products"))?.n;
    expect(count).toBeNumber();
    expect(readdirSync(replicas)).toEqual([]);
    expect(
      (await db.requestView?.get<{ n: number }>("SELECT count(*) AS n FROM products"))?.n,
    ).toBe(count as number);
    // Made in the background from that read on.
    expect(await until(() => readdirSync(replicas).includes("store-shop1.db"))).toBe(true);
    await db.close();
    expect(readdirSync(replicas)).toEqual([]);
  });

  test("until a store's replica is made, its reads go to the server (a big store's first copy holds up nothing)", async () => {
    // The replication API's requests are held until `release`: the replica is made as
    // slowly as a big store's first copy.
    const { promise: released, resolve: release } = Promise.withResolvers<void>();
    const proxy = sqldProxy(replicated.url, async (url) => {
      if (isReplication(url)) await released;
      return null;
    });
    const { db, replicas } = await shopWithReplica(proxy.url, "replica-held");
    try {
      const count = (await db.get<{ n: number }>("SELECT count(*) AS n FROM products"))?.n;
      const read = () => db.requestView?.get<{ n: number }>("SELECT count(*) AS n FROM products");
      for (let i = 0; i < 5; i++) expect((await read())?.n).toBe(count as number);
      // The replica's file is being made meanwhile (its worker thread opens it a moment after the first read).
      const made = () => readdirSync(replicas).filter((name) => name.endsWith(".db"));
      expect(await until(() => made().length > 0)).toBe(true);
      expect(made()).toEqual(["store-shop1.db"]);
      for (let i = 0; i < 5; i++) expect((await read())?.n).toBe(count as number);
      release();
      expect(await until(() => readdirSync(replicas).includes("store-shop1.db"))).toBe(true);
      for (let i = 0; i < 5; i++) expect((await read())?.n).toBe(count as number);
    } finally {
      await db.close();
      proxy.stop();
    }
    expect(readdirSync(replicas)).toEqual([]);
  });

  test("while the replica cannot be synced its reads go to the server, and back to the replica once it can", async () => {
    let syncsFail = false;
    const proxy = sqldProxy(replicated.url, (url) =>
      syncsFail && isReplication(url) ? new Response("unavailable", { status: 503 }) : null,
    );
    const { db } = await shopWithReplica(proxy.url, "replica-failing");
    const leads = async () =>
      (await db.requestView?.get<{ n: number }>("SELECT count(*) AS n FROM leads"))?.n;
    /** Whether a read went to the replica: no statement reached the server for it. */
    const fromReplica = async () => {
      const before = proxy.passed.statements;
      await leads();
      return proxy.passed.statements === before;
    };
    try {
      let replicaReads = false;
      for (
        const endAt = Date.now() + 15_000;
        !replicaReads && Date.now() < endAt;
        await Bun.sleep(50)
      )
        replicaReads = await fromReplica();
      expect(replicaReads).toBe(true);
      const count = (await leads()) as number;

      syncsFail = true;
      await db.run("INSERT INTO leads (name, created_at) VALUES ('Dana', 0)");
      expect(await leads()).toBe(count + 1); // the sync failed: read from the server
      expect(await fromReplica()).toBe(false); // for a while, without trying the sync again

      syncsFail = false;
      await Bun.sleep(1_100);
      expect(await leads()).toBe(count + 1);
      expect(await fromReplica()).toBe(true);
    } finally {
      await db.close();
      proxy.stop();
    }
  });

  test("replicas keep answering while sqld compacts the store's log into snapshots under writes", async () => {
    // Compacted every second: a replica that syncs meanwhile is told "snapshot not found".
    const compacting = await startSqld({ replicas: true, args: ["--max-log-duration", "1"] });
    const node = join(dir, "compacting-node");
    let busy: ServerProcess | undefined;
    try {
      const fixture = join(dir, "compacting-fixture.json");
      writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
      const loaded = await runCli(["load", fixture, ...compacting.flags, "--data", node]);
      expect([loaded.code, loaded.stderr]).toEqual([0, ""]);
      busy = await spawnServer(node, [...compacting.serveFlags, "--rate-limit", "100000"]);
      const url = busy.url;
      const created = await send(url, "/api/v1/products", {
        method: "POST",
        body: { name: "Mug", price: 1 },
      });
      const path = `/api/v1/products/${created.json.data.id}`;
      const statuses = new Map<number, number>();
      const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
      const endAt = Date.now() + 6_000;
      // Each write is followed by a read, which syncs the replica first (a client reads its own writes).
      const writer = async (w: number) => {
        for (let i = 0; Date.now() < endAt; i++) {
          const price = w * 10_000 + i;
          count((await send(url, path, { method: "PATCH", body: { price } })).status);
          const read = await send(url, path);
          count(read.status);
          if (read.status === 200) expect(read.json.data.price).toBeNumber();
        }
      };
      await Promise.all([1, 2, 3, 4].map(writer));
      expect([...statuses.keys()]).toEqual([200]);
      expect(statuses.get(200)).toBeGreaterThan(40);
    } finally {
      await busy?.signal("SIGTERM");
      await compacting.stop();
    }
  });

  test("--libsql-replicas is refused without --libsql-url (serve and demo), and with a server named by its IP address", async () => {
    const serve = ["serve", "--listen", "127.0.0.1:0", "--allow-http", "--libsql-replicas"];
    const alone = await runCli([...serve, "--data", join(dir, "r1")]);
    expect([alone.code, alone.stderr]).toEqual([
      2,
      "storeapi: --libsql-replicas needs --libsql-url\n",
    ]);
    const demo = await runCli([
      "demo",
      "--listen",
      "127.0.0.1:0",
      "--libsql-replicas",
      "--data",
      join(dir, "r3"),
    ]);
    expect([demo.code, demo.stderr]).toEqual([
      2,
      "storeapi: --libsql-replicas needs --libsql-url\n",
    ]);
    expect(existsSync(join(dir, "r3"))).toBe(false);
    const byIp = await runCli([...serve, "--data", join(dir, "r2"), ...sqld.flags]);
    expect([byIp.code, byIp.stderr]).toEqual([
      2, // a usage mistake, like the others
      "storeapi: --libsql-replicas needs --libsql-url to name the server by a host name, not 127.0.0.1: each store's replica reaches it as store-{slug}.{host}\n",
    ]);
  });
});

describe.skipIf(TEST_LIBSQL || UNDER_DENO || !namesResolve)(
  "a libSQL server that stops answering",
  () => {
    let outage: Sqld;
    const nodes: ServerProcess[] = [];
    afterAll(async () => {
      for (const node of nodes) await node.signal("SIGTERM");
      await outage?.stop();
    });

    const unavailable = {
      ok: false,
      error: {
        code: "store_unavailable",
        message: "This store is unavailable right now; try again later.",
      },
    };
    const other = { host: "shop2.test", key: KEYS.other };

    test("answers 503 store_unavailable within the deadline, never hangs the node, logs one line per outage, and recovers", async () => {
      outage = await startSqld({ replicas: true });
      const fixture = join(dir, "outage-fixture.json");
      writeFileSync(fixture, JSON.stringify({ stores: [testStore(), otherStore()] }));
      const loaded = await runCli(["load", fixture, ...outage.flags, "--data", join(dir, "o1")]);
      expect([loaded.code, loaded.stderr]).toEqual([0, ""]);
      const replicaNode = await spawnServer(join(dir, "o1"), [
        ...outage.serveFlags,
        "--metrics-listen",
        "127.0.0.1:0",
      ]);
      const metricsUrl = JSON.parse(
        replicaNode
          .stdout()
          .split("\n")
          .find((line) => line.includes('"listening"')) ?? "{}",
      ).metricsUrl;
      const plainNode = await spawnServer(join(dir, "o2"), outage.flags);
      nodes.push(replicaNode, plainNode);

      const created = await send(plainNode.url, "/api/v1/products", {
        method: "POST",
        body: { name: "Lamp", price: 30 },
      });
      expect(created.status).toBe(201);
      const path = `/api/v1/products/${created.json.data.id}`;
      expect((await send(replicaNode.url, path)).json.data.name).toBe("Lamp");
      // The first read made shop1's replica in the background; reads come from it once its
      // reads' connection is open, the one that opens the file's SQLite WAL (the replica's
      // own connection keeps libSQL's frame index instead).
      const replicaWal = join(dir, "o1", "replicas", "store-shop1.db-wal");
      const openFiles = () =>
        readdirSync(`/proc/${replicaNode.proc.pid}/fd`).map((fd) => {
          try {
            return readlinkSync(`/proc/${replicaNode.proc.pid}/fd/${fd}`);
          } catch {
            return ""; // closed meanwhile
          }
        });
      expect(await until(() => openFiles().includes(replicaWal))).toBe(true);
      expect((await send(replicaNode.url, path)).json.data.name).toBe("Lamp");

      outage.signal("SIGSTOP");
      await Bun.sleep(1100); // the replica's last sync is now too old to read from
      let pending = 5;
      const sentAt = performance.now();
      const waited: number[] = [];
      const counted = <T>(answer: Promise<T>) =>
        answer.finally(() => {
          pending--;
          waited.push(performance.now() - sentAt);
        });
      // A scrape reads the open stores' outboxes: it fails in one plain line, not a 500 page.
      const scrape = fetch(metricsUrl).then(async (r) => [r.status, await r.text()]);
      const answers = Promise.all([
        counted(send(replicaNode.url, path)),
        counted(send(replicaNode.url, path, { method: "PATCH", body: { name: "Floor lamp" } })),
        // shop2 has no replica yet: making one waits on the server, on the replicas' thread
        counted(send(replicaNode.url, "/api/v1/products", other)),
        counted(send(plainNode.url, path)),
        counted(send(plainNode.url, path, { method: "PATCH", body: { name: "Desk lamp" } })),
      ]);
      await Bun.sleep(500);
      // The node keeps answering what needs no database meanwhile.
      expect((await send(replicaNode.url, "/api/v1/openapi.json", { key: null })).status).toBe(200);
      expect(pending).toBe(5);
      for (const answer of await answers) {
        expect(answer.status).toBe(503);
        expect(answer.json).toEqual(unavailable);
      }
      // One deadline (8 s) each, not a replica's sync and then the server's read (16 s,
      // past Bun's 10 s cut of a waiting connection: the client got no answer at all).
      for (const ms of waited) expect(ms).toBeLessThan(12_000);
      expect(await scrape).toEqual([
        503,
        "metrics unavailable: a store's database cannot be read now\n",
      ]);

      outage.signal("SIGCONT");
      expect((await send(plainNode.url, path)).status).toBe(200);
      expect((await send(replicaNode.url, path)).status).toBe(200);
      expect((await send(replicaNode.url, "/api/v1/products", other)).status).toBe(200);
      expect((await fetch(metricsUrl)).status).toBe(200);

      // Gone: refused at once without a replica, within the replica's own sync timeout with one.
      outage.signal("SIGKILL");
      await Bun.sleep(1100);
      for (const node of nodes) expect((await send(node.url, path)).json).toEqual(unavailable);

      // Every line on stdout is ours (JSON), and the registry's poll (every 250 ms) failed
      // many times but said so once per outage on each node.
      for (const node of nodes) {
        const lines = node.stdout().trim().split("\n");
        for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
        const refreshFailures = lines.filter((line) =>
          line.includes("store registry refresh failed"),
        );
        expect(refreshFailures.length).toBeLessThanOrEqual(2);
      }
    });

    test("writes waiting behind one the server leaves unanswered give up with it: none waits past one deadline", async () => {
      const stalled = await startSqld();
      const fixture = join(dir, "stall-fixture.json");
      const order = { id: 1, number: 1001, status: 1, total: 10 };
      writeFileSync(fixture, JSON.stringify({ stores: [testStore({ orders: [order] })] }));
      const data = join(dir, "stall-node");
      expect((await runCli(["load", fixture, ...stalled.flags, "--data", data])).code).toBe(0);
      const node = await spawnServer(data, stalled.flags);
      try {
        // No Idempotency-Key: its lookup is a read, which would meet the stall first.
        const create = (i: number) =>
          send(node.url, "/api/v1/products", {
            method: "POST",
            body: { name: `Stalled ${i}`, price: 1 },
          });
        expect((await create(0)).status).toBe(201);
        stalled.signal("SIGSTOP");
        const sentAt = performance.now();
        const timed = async (sent: ReturnType<typeof create>) => {
          const answer = await sent;
          const ms = performance.now() - sentAt;
          return { status: answer.status, code: answer.json?.error?.code, ms };
        };
        // A PATCH too, first (it reads the order, then writes it in a batch: the batch's
        // turn in the queue is tested in src/db/client.test.ts).
        const patch = timed(
          send(node.url, "/api/v1/orders/1", { method: "PATCH", body: { status: 2 } }),
        );
        await Bun.sleep(200);
        const answers = await Promise.all([patch, ...[1, 2, 3].map((i) => timed(create(i)))]);
        stalled.signal("SIGCONT");
        // Before: 16 s for the first (its rollback waited a deadline of its own), 24 and
        // 32 s for those behind it, past Bun's 10 s cut (no answer at all).
        for (const answer of answers) {
          expect([answer.status, answer.code]).toEqual([503, "store_unavailable"]);
          expect(answer.ms).toBeLessThan(12_000);
        }
        // None of them was made, and the server takes writes again.
        expect((await send(node.url, "/api/v1/orders/1")).json.data.status.id).toBe(1);
        expect((await create(5)).status).toBe(201);
        const names = (await send(node.url, "/api/v1/products?limit=100")).json.data.map(
          (p: { name: string }) => p.name,
        );
        expect(names.sort()).toEqual(["Stalled 0", "Stalled 5"]);
      } finally {
        stalled.signal("SIGCONT");
        await node.signal("SIGTERM");
        await stalled.stop();
      }
    }, 120_000);
  },
);
