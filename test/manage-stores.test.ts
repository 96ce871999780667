import { Database as SqliteDatabase } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import Database from "libsql";
import { DEFAULT_ORDER_STATUSES } from "../src/stores/rules";
import { tempDir, until } from "./helpers";
import { dataDirIn, manage, newHostKey, storeBody } from "./manage-support";
import { runCli, type ServerProcess, spawnServer } from "./process";
import { TEST_LIBSQL } from "./sqld";

// Each test starts CLI processes or waits for a reload: on a loaded machine that takes seconds.
setDefaultTimeout(60_000);

let dir: string;
let data: string;
let server: ServerProcess;
let hostKey: string;

beforeAll(async () => {
  dir = tempDir("storeapi-manage-stores-");
  data = dataDirIn(dir);
  hostKey = await newHostKey(data);
  server = await spawnServer(data);
});

afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown) =>
  manage(server.url, method, path, { key: hostKey, body });
const ISRAEL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[23]:00$/;

describe("POST /manage/v1/stores", () => {
  test("creates a store with default statuses and settings, served at once on the store API", async () => {
    const created = await call(
      "POST",
      "/stores",
      storeBody("alpha", { domain: "Alpha.Example.com" }),
    );
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      ok: true,
      data: {
        slug: "alpha",
        name: "Shop alpha",
        domain: "alpha.example.com",
        alternativeDomain: "alpha.localhost",
        plan: "growth",
        ownerEmail: "owner@alpha.example.com",
        settings: { manualCustomerApproval: false, notifyStatusChange: true, registration: true },
        orderStatuses: DEFAULT_ORDER_STATUSES,
        createdAt: expect.stringMatching(ISRAEL_TIME),
      },
    });
    expect((await call("GET", "/stores/alpha")).json).toEqual(created.json);
    // The store API knows the host now (a 401 for no key, not a 404 for no store).
    const storeApi = await fetch(`${server.url}/api/v1/orders`, {
      headers: { Host: "alpha.example.com" },
    });
    expect(storeApi.status).toBe(401);
  });

  test("given settings and statuses are kept, statuses sorted by id", async () => {
    const created = await call(
      "POST",
      "/stores",
      storeBody("beta", {
        settings: { registration: false },
        orderStatuses: [
          { id: 7, name: "Z" },
          { id: 2, name: "A" },
        ],
      }),
    );
    expect(created.status).toBe(201);
    expect(created.json.data.settings).toEqual({
      manualCustomerApproval: false,
      notifyStatusChange: true,
      registration: false,
    });
    expect(created.json.data.orderStatuses).toEqual([
      { id: 2, name: "A" },
      { id: 7, name: "Z" },
    ]);
  });

  test.each([
    [{ ...storeBody("x"), slug: "-bad" }, "slug"],
    [{ ...storeBody("x"), slug: "a".repeat(64) }, "slug"],
    [{ ...storeBody("x"), domain: "localhost" }, "domain"],
    [{ ...storeBody("x"), domain: "bad_domain.com" }, "domain"],
    [{ ...storeBody("x"), plan: "gold" }, "plan"],
    [{ ...storeBody("x"), ownerEmail: "nope" }, "ownerEmail"],
    [{ ...storeBody("x"), settings: { registration: "yes" } }, "settings.registration"],
    [
      {
        ...storeBody("x"),
        orderStatuses: [
          { id: 1, name: "A" },
          { id: 1, name: "B" },
        ],
      },
      "orderStatuses",
    ],
    [{ ...storeBody("x"), extra: 1 }, "extra"],
    [{ slug: "x" }, "name"],
    [{ ...storeBody("x"), name: " \t " }, "name"],
    [{ ...storeBody("x"), name: "\u200b\u0085" }, "name"], // invisible: a blank email sender
    [{ ...storeBody("x"), orderStatuses: [{ id: 1, name: "  " }] }, "orderStatuses.0.name"],
  ])("bad body %j is 400 invalid_field naming %s", async (body, field) => {
    const answer = await call("POST", "/stores", body);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({ code: "invalid_field", field });
    expect((await call("GET", "/stores/x")).status).toBe(404);
  });

  test("conflicts: slug_taken, domain_taken (another store's domain, case-insensitive, or under the platform domain)", async () => {
    await call("POST", "/stores", storeBody("gamma"));
    expect(
      (await call("POST", "/stores", storeBody("gamma", { domain: "other.example.com" }))).json
        .error.code,
    ).toBe("slug_taken");
    // Both taken (the domain by another store): the slug is checked first.
    expect((await call("POST", "/stores", storeBody("gamma-two"))).status).toBe(201);
    const both = await call(
      "POST",
      "/stores",
      storeBody("gamma", { domain: "gamma-two.example.com" }),
    );
    expect(both.json.error.code).toBe("slug_taken");
    const cases = ["GAMMA.example.com", "gamma.localhost", "anything.localhost"];
    for (const domain of cases) {
      const answer = await call("POST", "/stores", storeBody("delta", { domain }));
      expect(answer.status).toBe(409);
      expect(answer.json.error).toMatchObject({ code: "domain_taken", field: "domain" });
    }
  });

  test("concurrent creates of one slug: exactly one 201, the others slug_taken", async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call("POST", "/stores", storeBody("race", { domain: `race${i}.example.com` })),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect(
      answers.filter((a) => a.status === 409).every((a) => a.json.error.code === "slug_taken"),
    ).toBe(true);
  });

  test("a store added by `stores add` has the same default statuses", async () => {
    const added = await runCli([
      "stores",
      "add",
      "iota",
      "--domain",
      "iota.example.com",
      "--plan",
      "growth",
      "--owner-email",
      "o@iota.example.com",
      "--data",
      data,
    ]);
    expect(added.code).toBe(0);
    // The server's registry picks the store up within 250 ms.
    expect(await until(async () => (await call("GET", "/stores/iota")).status === 200)).toBe(true);
    const iota = (await call("GET", "/stores/iota")).json.data;
    expect(iota.orderStatuses).toEqual(DEFAULT_ORDER_STATUSES);
  });

  // Plants a file; on a server the leftover is a namespace (test/libsql.test.ts).
  test.skipIf(TEST_LIBSQL)(
    "a leftover unregistered store file is overwritten by the next create",
    async () => {
      const made = await runCli([
        "stores",
        "add",
        "ghost",
        "--domain",
        "ghost.example.com",
        "--plan",
        "growth",
        "--owner-email",
        "o@g.com",
        "--data",
        data,
      ]);
      expect(made.code).toBe(0);
      // Simulate a crash between the file and its registration: the row goes, the file stays.
      const { Database } = await import("bun:sqlite");
      const platform = new Database(join(data, "platform.db"));
      platform.run("PRAGMA busy_timeout = 5000"); // the running server may be writing it
      platform.run("DELETE FROM stores WHERE slug = 'ghost'");
      platform.close();
      await Bun.sleep(600);
      expect(existsSync(join(data, "stores", "ghost.db"))).toBe(true);
      const created = await call(
        "POST",
        "/stores",
        storeBody("ghost", { orderStatuses: [{ id: 3, name: "Only" }] }),
      );
      expect(created.status).toBe(201);
      expect(created.json.data.orderStatuses).toEqual([{ id: 3, name: "Only" }]);
    },
  );
});

describe("GET /manage/v1/stores", () => {
  test("newest first with cursor pagination", async () => {
    for (const slug of ["p1", "p2", "p3"]) {
      expect((await call("POST", "/stores", storeBody(slug))).status).toBe(201);
      await Bun.sleep(5);
    }
    const all = (await call("GET", "/stores?limit=100")).json.data.map(
      (s: { slug: string }) => s.slug,
    );
    expect(all.slice(0, 3)).toEqual(["p3", "p2", "p1"]);
    const first = await call("GET", "/stores?limit=2");
    expect(first.json.data.map((s: { slug: string }) => s.slug)).toEqual(["p3", "p2"]);
    expect(first.json.hasMore).toBe(true);
    const second = await call("GET", `/stores?limit=2&cursor=${first.json.nextCursor}`);
    expect(second.json.data.map((s: { slug: string }) => s.slug)).toEqual(all.slice(2, 4));
    expect((await call("GET", "/stores?limit=0")).json.error).toMatchObject({
      code: "invalid_parameter",
      field: "limit",
    });
    expect((await call("GET", "/stores?cursor=abc")).json.error).toMatchObject({
      code: "invalid_parameter",
      field: "cursor",
    });
  });
  test("stores made in one millisecond (one load) are paged by slug: one deleted meanwhile skips none", async () => {
    const fixture = join(dir, "same-ms.json");
    const slugs = ["t0", "t1", "t2", "t3", "t4"];
    await Bun.write(
      fixture,
      JSON.stringify({
        stores: slugs.map((slug) => ({
          slug,
          name: slug,
          domain: `${slug}.example.org`,
          plan: "growth",
          ownerEmail: `o@${slug}.example.org`,
        })),
      }),
    );
    expect((await runCli(["load", fixture, "--data", data])).code).toBe(0);
    const slugsOf = (page: { json: { data: { slug: string }[] } }) =>
      page.json.data.map((store) => store.slug);
    let first = await call("GET", "/stores?limit=2");
    for (let i = 0; i < 50 && slugsOf(first)[0] !== "t4"; i++) {
      await Bun.sleep(100); // the server reloads the registry within a second
      first = await call("GET", "/stores?limit=2");
    }
    expect(slugsOf(first)).toEqual(["t4", "t3"]);
    expect((await call("DELETE", "/stores/t4")).status).toBe(200);
    const second = await call("GET", `/stores?limit=2&cursor=${first.json.nextCursor}`);
    expect(slugsOf(second)).toEqual(["t2", "t1"]);
    const third = await call("GET", `/stores?limit=1&cursor=${second.json.nextCursor}`);
    expect(slugsOf(third)).toEqual(["t0"]);
  });
});

describe("PATCH /manage/v1/stores/{slug}", () => {
  test("changes any field but slug; settings merge", async () => {
    await call("POST", "/stores", storeBody("eps"));
    const patched = await call("PATCH", "/stores/eps", {
      name: "שלום",
      plan: "pro",
      domain: "eps2.example.com",
      ownerEmail: "new@example.com",
      settings: { manualCustomerApproval: true },
    });
    expect(patched.status).toBe(200);
    expect(patched.json.data).toMatchObject({
      name: "שלום",
      plan: "pro",
      domain: "eps2.example.com",
      ownerEmail: "new@example.com",
      settings: { manualCustomerApproval: true, notifyStatusChange: true, registration: true },
    });
    expect((await call("PATCH", "/stores/eps", { slug: "other" })).json.error).toMatchObject({
      code: "invalid_field",
      field: "slug",
    });
    for (const nothing of [{}, { settings: {} }])
      expect((await call("PATCH", "/stores/eps", nothing)).json.error.code).toBe(
        "nothing_to_update",
      );
    expect(
      (await call("PATCH", "/stores/eps", { domain: "alpha.example.com" })).json.error.code,
    ).toBe("domain_taken");
    expect((await call("PATCH", "/stores/eps", { domain: "eps2.example.com" })).status).toBe(200);
    expect((await call("PATCH", "/stores/nope", { plan: "pro" })).status).toBe(404);
  });
});

describe("PATCH /manage/v1/stores/{slug} beside the CLI", () => {
  // Holds platform.db's write lock from here, as `stores set` does while it writes.
  test.skipIf(TEST_LIBSQL)(
    "a domain another store took while the change waited for the lock is domain_taken, not a 500",
    async () => {
      await call("POST", "/stores", storeBody("zeta1"));
      await call("POST", "/stores", storeBody("zeta2"));
      const cli = new Database(join(data, "platform.db"));
      try {
        cli.exec("PRAGMA busy_timeout = 5000");
        cli.exec("BEGIN IMMEDIATE");
        cli
          .prepare("UPDATE stores SET domain = ? WHERE slug = ?")
          .run("zeta-moved.example.com", "zeta1");
        const patched = call("PATCH", "/stores/zeta2", {
          domain: "zeta-moved.example.com",
          orderStatuses: [{ id: 1, name: "Only" }],
        });
        await Bun.sleep(300);
        cli.exec("COMMIT");
        const answer = await patched;
        expect([answer.status, answer.json.error?.code]).toEqual([409, "domain_taken"]);
      } finally {
        cli.close();
      }
      // All or nothing: the statuses, replaced before the registry refused, are put back.
      const zeta2 = (await call("GET", "/stores/zeta2")).json.data;
      expect([zeta2.domain, zeta2.orderStatuses]).toEqual([
        "zeta2.example.com",
        DEFAULT_ORDER_STATUSES,
      ]);
    },
  );
});

describe("PATCH /manage/v1/stores/{slug} right after `stores set`", () => {
  // The CLI's change is committed while the PATCH waits for the lock: the server's registry
  // copy (reloaded every 250 ms) cannot have seen it yet.
  test.skipIf(TEST_LIBSQL)(
    "changes only the fields it names; the CLI's plan and setting stay",
    async () => {
      await call("POST", "/stores", storeBody("eta", { plan: "growth" }));
      const cli = new Database(join(data, "platform.db"));
      try {
        cli.exec("PRAGMA busy_timeout = 5000");
        cli.exec("BEGIN IMMEDIATE");
        cli.prepare("UPDATE stores SET plan = 'pro', registration = 0 WHERE slug = ?").run("eta");
        const patched = call("PATCH", "/stores/eta", {
          name: "Eta renamed",
          settings: { manualCustomerApproval: true },
        });
        await Bun.sleep(300);
        cli.exec("COMMIT");
        expect((await patched).status).toBe(200);
      } finally {
        cli.close();
      }
      const eta = (await call("GET", "/stores/eta")).json.data;
      expect([eta.name, eta.plan, eta.settings]).toEqual([
        "Eta renamed",
        "pro",
        { manualCustomerApproval: true, notifyStatusChange: true, registration: false },
      ]);
    },
  );
});

describe("PUT /manage/v1/stores/{slug}/order-statuses", () => {
  test("replaces the set; a removed id orders use is status_in_use naming it", async () => {
    await call("POST", "/stores", storeBody("zeta"));
    const fixture = join(dir, "orders.json");
    await Bun.write(
      fixture,
      JSON.stringify({
        stores: [
          {
            ...storeBody("zeta-orders"),
            orderStatuses: [{ id: 4, name: "S" }],
            orders: [{ number: 1, status: 4, total: 10 }],
          },
        ],
      }),
    );
    expect((await runCli(["load", fixture, "--data", data])).code).toBe(0);
    await Bun.sleep(600);
    const inUse = await call("PUT", "/stores/zeta-orders/order-statuses", [{ id: 1, name: "New" }]);
    expect(inUse.status).toBe(409);
    expect(inUse.json.error).toEqual({
      code: "status_in_use",
      message: "Orders still use status ids 4; keep them in the set.",
    });

    const replaced = await call("PUT", "/stores/zeta/order-statuses", [
      { id: 9, name: "Late" },
      { id: 1, name: "First" },
    ]);
    expect(replaced.json).toEqual({
      ok: true,
      data: [
        { id: 1, name: "First" },
        { id: 9, name: "Late" },
      ],
    });
    // PATCH takes any field but the slug (management-api.md), the statuses replaced as by PUT.
    const patched = await call("PATCH", "/stores/zeta", {
      name: "Zeta renamed",
      orderStatuses: [{ id: 2, name: "Two" }],
    });
    expect([patched.status, patched.json.data.name, patched.json.data.orderStatuses]).toEqual([
      200,
      "Zeta renamed",
      [{ id: 2, name: "Two" }],
    ]);
    const refused = await call("PATCH", "/stores/zeta-orders", {
      name: "Not renamed",
      orderStatuses: [{ id: 1, name: "New" }],
    });
    expect([refused.status, refused.json.error.code]).toEqual([409, "status_in_use"]);
    const unchanged = (await call("GET", "/stores/zeta-orders")).json.data;
    expect([unchanged.name, unchanged.orderStatuses]).toEqual([
      storeBody("zeta-orders").name,
      [{ id: 4, name: "S" }],
    ]);

    expect((await call("PUT", "/stores/zeta/order-statuses", { id: 1 })).json.error).toMatchObject({
      code: "invalid_field",
      field: "body",
    });
    expect(
      (await call("PUT", "/stores/zeta/order-statuses", [{ id: 0, name: "x" }])).json.error,
    ).toMatchObject({
      code: "invalid_field",
      field: "0.id",
    });
  });
});

describe("DELETE /manage/v1/stores/{slug}", () => {
  // Looks for the archived file in DIR/deleted/; on a server the namespace stays (test/libsql.test.ts).
  test.skipIf(TEST_LIBSQL)(
    "answers the store as it was, stops serving it, archives its file alone; slug and domain are free again",
    async () => {
      await call("POST", "/stores", storeBody("omega"));
      const before = await call("GET", "/stores/omega");
      const deleted = await call("DELETE", "/stores/omega");
      expect(deleted.status).toBe(200);
      expect(deleted.json).toEqual(before.json);
      expect((await call("GET", "/stores/omega")).status).toBe(404);
      expect(
        (await fetch(`${server.url}/api/v1/orders`, { headers: { Host: "omega.example.com" } }))
          .status,
      ).toBe(404);
      const archived = readdirSync(join(data, "deleted")).filter((f) => f.startsWith("omega-"));
      expect(archived).toHaveLength(1);
      expect(archived[0]).toMatch(/^omega-\d{8}T\d{6}Z\.db$/);
      expect(existsSync(join(data, "stores", "omega.db"))).toBe(false);
      expect(existsSync(join(data, "stores", "omega.db-wal"))).toBe(false);
      expect((await call("DELETE", "/stores/omega")).status).toBe(404);
      expect((await call("POST", "/stores", storeBody("omega"))).status).toBe(201);
    },
  );

  test.skipIf(TEST_LIBSQL)(
    "a write whose body is still arriving when its store is deleted completes, and is in the archive",
    async () => {
      await call("POST", "/stores", storeBody("tau"));
      const key = (
        await call("POST", "/stores/tau/keys", { name: "k", permissions: { products: "write" } })
      ).json.data.key;
      const body = JSON.stringify({ name: "Late", price: 5 });
      const { hostname, port } = new URL(server.url);
      let answer = "";
      const socket = connect(Number(port), hostname);
      socket.on("data", (chunk) => {
        answer += chunk.toString();
      });
      socket.write(
        `POST /api/v1/products HTTP/1.1\r\nHost: tau.example.com\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
      await Bun.sleep(300);
      const deleted = call("DELETE", "/stores/tau");
      await Bun.sleep(300);
      socket.write(body.slice(5));
      expect((await deleted).status).toBe(200);
      for (let i = 0; i < 100 && !answer.includes("\r\n\r\n"); i++) await Bun.sleep(50);
      socket.destroy();
      expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 201 Created");
      const [archived] = readdirSync(join(data, "deleted")).filter((f) => f.startsWith("tau-"));
      const archive = new Database(join(data, "deleted", archived as string), { readonly: true });
      try {
        expect(archive.prepare("SELECT name FROM products").all()).toEqual([{ name: "Late" }]);
      } finally {
        archive.close();
      }
    },
  );

  test("a store made again under a deleted one's slug starts afresh: its first key's rate limit, and the old store's cursors refused", async () => {
    const storeApi = (key: string, path: string, body?: unknown) =>
      fetch(`${server.url}/api/v1${path}`, {
        method: body ? "POST" : "GET",
        headers: {
          Host: "rho.example.com",
          Authorization: `Bearer ${key}`,
          "Content-Type": "application/json",
        },
        body: body ? JSON.stringify(body) : undefined,
      });
    const newStoreWithProducts = async () => {
      expect((await call("POST", "/stores", storeBody("rho"))).status).toBe(201);
      const made = await call("POST", "/stores/rho/keys", {
        name: "k",
        permissions: { products: "write" },
      });
      expect(made.json.data.id).toBe(1);
      for (const name of ["a", "b"])
        expect((await storeApi(made.json.data.key, "/products", { name, price: 1 })).status).toBe(
          201,
        );
      return made.json.data.key as string;
    };
    // The limit is per clock minute: start early in one, so the requests below share it.
    const intoMinute = new Date().getUTCSeconds();
    if (intoMinute > 40) await Bun.sleep((60 - intoMinute) * 1000 + 100);
    const first = await newStoreWithProducts();
    const cursor = (await (await storeApi(first, "/products?limit=1")).json()).nextCursor;
    let status = 200;
    for (let i = 0; i < 200 && status !== 429; i++)
      status = (await storeApi(first, "/products?limit=1")).status;
    expect(status).toBe(429);
    expect((await call("DELETE", "/stores/rho")).status).toBe(200);
    // The new store's key 1 has the old key 1's id, within the same minute.
    const second = await newStoreWithProducts();
    const listed = await storeApi(second, "/products?limit=1");
    expect([listed.status, listed.headers.get("RateLimit-Remaining")]).toEqual([200, "117"]);
    const resumed = await storeApi(
      second,
      `/products?limit=1&cursor=${encodeURIComponent(cursor)}`,
    );
    expect([resumed.status, (await resumed.json()).error.code]).toEqual([400, "invalid_parameter"]);
  });

  // A reader in this process holds its snapshot across the delete; files only.
  test.skipIf(TEST_LIBSQL)(
    "a store another process is reading while it is deleted is archived with every acknowledged write",
    async () => {
      await call("POST", "/stores", storeBody("sigma"));
      const key = (
        await call("POST", "/stores/sigma/keys", { name: "k", permissions: { products: "write" } })
      ).json.data.key;
      const reader = new SqliteDatabase(join(data, "stores", "sigma.db"));
      reader.run("BEGIN");
      reader.query("SELECT count(*) FROM products").get();
      try {
        for (const name of ["a", "b", "c"]) {
          const made = await fetch(`${server.url}/api/v1/products`, {
            method: "POST",
            headers: {
              Host: "sigma.example.com",
              Authorization: `Bearer ${key}`,
              "Content-Type": "application/json",
            },
            body: JSON.stringify({ name, price: 1 }),
          });
          expect(made.status).toBe(201);
        }
        // SQLite checkpoints only up to the reader's snapshot: the writes stay in the WAL.
        const deleting = call("DELETE", "/stores/sigma");
        // The checkpoint waits for the reader in short tries, not in SQLite's busy handler
        // (@libsql/client on a file, STOREAPI_DRIVER=client, still waits in it).
        const first = await Promise.race([
          fetch(`${server.url}/healthz`).then((answer) => `healthz ${answer.status}`),
          deleting.then(() => "delete"),
        ]);
        if (process.env.STOREAPI_DRIVER !== "client") expect(first).toBe("healthz 200");
        expect((await deleting).status).toBe(200);
      } finally {
        reader.run("COMMIT");
        reader.close();
      }
      const [archived] = readdirSync(join(data, "deleted")).filter(
        (f) => f.startsWith("sigma-") && f.endsWith(".db"),
      );
      const archive = new SqliteDatabase(join(data, "deleted", archived as string));
      try {
        expect(archive.query("SELECT name FROM products ORDER BY id").all()).toEqual([
          { name: "a" },
          { name: "b" },
          { name: "c" },
        ]);
      } finally {
        archive.close();
      }
    },
  );

  test.skipIf(TEST_LIBSQL)(
    "a store of the same slug deleted again within the second keeps both archives",
    async () => {
      for (let i = 0; i < 3; i++) {
        expect((await call("POST", "/stores", storeBody("psi"))).status).toBe(201);
        expect((await call("DELETE", "/stores/psi")).status).toBe(200);
      }
      const archived = readdirSync(join(data, "deleted")).filter((f) => f.startsWith("psi-"));
      expect(archived).toHaveLength(3);
      for (const name of archived) expect(name).toMatch(/^psi-\d{8}T\d{6}Z(-[23])?\.db$/);
    },
  );
});

describe("the management API's front door", () => {
  test("unknown path 404 and wrong method 405 only after the host key; OPTIONS 405 before it; key in URL 400", async () => {
    expect((await manage(server.url, "GET", "/nothing", { key: null })).status).toBe(401);
    expect((await call("GET", "/nothing")).json.error.code).toBe("not_found");
    // Another version of the management API is sent to this one, not to the store API.
    const version = await fetch(`${server.url}/manage/v2/stores`, {
      headers: { Authorization: `Bearer ${hostKey}` },
    });
    expect((await version.json()).error).toEqual({
      code: "not_found",
      message:
        "There is no endpoint at /manage/v2/stores; the management API lives under /manage/v1/.",
    });
    const wrong = await call("PUT", "/stores");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("Allow")).toBe("GET, HEAD, POST");
    const options = await manage(server.url, "OPTIONS", "/stores/alpha", { key: null });
    expect(options.status).toBe(405);
    expect(options.headers.get("Allow")).toBe("DELETE, GET, HEAD, PATCH");
    expect(
      (await manage(server.url, "GET", `/stores?apikey=${hostKey}`, { key: null })).json.error.code,
    ).toBe("key_in_url");
    expect(
      (
        await manage(server.url, "POST", "/stores", {
          key: hostKey,
          rawBody: "{",
          headers: { "Content-Type": "application/json" },
        })
      ).json.error.code,
    ).toBe("invalid_json");
    expect(
      (await manage(server.url, "POST", "/stores", { key: hostKey, rawBody: "{}" })).status,
    ).toBe(415);
  });
});
