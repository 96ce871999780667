import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { manageRoutes } from "../src/manage/routes";
import { tempDir } from "./helpers";
import { dataDirIn, manage, newHostKey, storeBody } from "./manage-support";
import { runCli, type ServerProcess, spawnServer } from "./process";

// Each test starts CLI processes or waits for a reload: on a loaded machine that takes seconds.
setDefaultTimeout(60_000);

const UNAUTHORIZED = {
  ok: false,
  error: {
    code: "unauthorized",
    message:
      "A valid API key is required: send it as 'Authorization: Bearer <key>' or 'X-Api-Key: <key>'.",
  },
};

let dir: string;
let data: string;
let server: ServerProcess;
let hostKey: string;

beforeAll(async () => {
  dir = tempDir("storeapi-manage-keys-");
  data = dataDirIn(dir);
  hostKey = await newHostKey(data);
  // Every endpoint is tried with wrong keys here: a lockout would hide the 401s (manage-lockout.test.ts tests it).
  server = await spawnServer(data, ["--manage-rate-limit", "5", "--auth-failure-limit", "1000"]);
});

afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

describe("storeapi host-keys", () => {
  test("create prints the key once, list shows only its hint, delete removes it", async () => {
    const local = tempDir("storeapi-hk-cli-");
    try {
      const run = (...args: string[]) => runCli([...args, "--data", dataDirIn(local)]);
      const created = await run(
        "host-keys",
        "create",
        "--name",
        "billing",
        "--expires",
        "30d",
        "--json",
      );
      expect(created.code).toBe(0);
      expect(Object.keys(created.json).sort()).toEqual(["expiresAt", "hint", "id", "key"]);
      expect(created.json.key).toMatch(/^svc_hk_[A-Za-z0-9]{40}$/);
      expect(created.json.hint).toBe(`svc_hk_…${created.json.key.slice(-4)}`);
      expect(created.json.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[23]:00$/);

      const listed = await run("host-keys", "list", "--json");
      expect(listed.json).toEqual([
        {
          id: created.json.id,
          name: "billing",
          hint: created.json.hint,
          createdAt: expect.any(String),
          expiresAt: created.json.expiresAt,
          expired: false,
        },
      ]);
      expect(listed.stdout).not.toContain(created.json.key);

      expect((await run("host-keys", "delete", String(created.json.id))).code).toBe(0);
      expect((await run("host-keys", "list", "--json")).json).toEqual([]);
      const again = await run("host-keys", "delete", String(created.json.id));
      expect(again.code).toBe(1);
      expect(again.stderr).toBe(`storeapi: no host key with id ${created.json.id}\n`);
    } finally {
      rmSync(local, { recursive: true, force: true });
    }
  });

  test("bad flags are usage errors", async () => {
    const run = (...args: string[]) => runCli([...args, "--data", data]);
    expect((await run("host-keys", "create")).stderr).toContain("missing --name");
    expect((await run("host-keys", "create", "--name", "x", "--expires", "2d")).stderr).toBe(
      'storeapi: --expires takes never, 30d, 90d or 1y, not "2d"\n',
    );
    expect((await run("host-keys", "delete", "abc")).code).toBe(2);
  });
});

describe("host keys on the management API", () => {
  test("missing, malformed, unknown keys and store keys are one 401; a new key works within a second; a deleted one stops", async () => {
    expect((await manage(server.url, "GET", "/stores", { key: null })).json).toEqual(UNAUTHORIZED);
    expect(
      (await manage(server.url, "GET", "/stores", { key: `svc_hk_${"a".repeat(40)}` })).json,
    ).toEqual(UNAUTHORIZED);

    const created = await manage(server.url, "POST", "/stores", {
      key: hostKey,
      body: storeBody("keys1"),
    });
    expect(created.status).toBe(201);
    const storeKey = await runCli([
      "keys",
      "create",
      "keys1",
      "--name",
      "k",
      "--orders",
      "read",
      "--json",
      "--data",
      data,
    ]);
    expect(storeKey.code).toBe(0);
    // A store key is never a host key…
    const withStoreKey = await manage(server.url, "GET", "/stores", { key: storeKey.json.key });
    expect(withStoreKey.status).toBe(401);
    expect(withStoreKey.json).toEqual(UNAUTHORIZED);
    // …and a host key never a store key.
    const storeApi = await fetch(`${server.url}/api/v1/orders`, {
      headers: { Host: "keys1.localhost", Authorization: `Bearer ${hostKey}` },
    });
    expect(storeApi.status).toBe(401);
    expect(await storeApi.json()).toEqual(UNAUTHORIZED);
    const storeApiOk = await fetch(`${server.url}/api/v1/orders`, {
      headers: { Host: "keys1.localhost", Authorization: `Bearer ${storeKey.json.key}` },
    });
    expect(storeApiOk.status).toBe(200);

    // Every management endpoint refuses the store key (and no key) with the one 401, before its route runs.
    for (const route of manageRoutes) {
      const path = route.path.replace(":slug", "keys1").replace(":id", "1");
      for (const key of [storeKey.json.key, null]) {
        const answer = await manage(server.url, route.method, path, {
          key,
          body: route.method === "GET" || route.method === "DELETE" ? undefined : {},
        });
        expect([route.method, route.path, answer.status, answer.json]).toEqual([
          route.method,
          route.path,
          401,
          UNAUTHORIZED,
        ]);
      }
    }
    expect((await manage(server.url, "GET", "/stores/keys1", { key: hostKey })).status).toBe(200);

    const late = await runCli(["host-keys", "create", "--name", "late", "--json", "--data", data]);
    await Bun.sleep(1000);
    expect((await manage(server.url, "GET", "/stores/keys1", { key: late.json.key })).status).toBe(
      200,
    );
    await runCli(["host-keys", "delete", String(late.json.id), "--data", data]);
    await Bun.sleep(1000);
    expect((await manage(server.url, "GET", "/stores/keys1", { key: late.json.key })).json).toEqual(
      UNAUTHORIZED,
    );
  });

  test("the rate limit counts per host key with the RateLimit headers", async () => {
    const own = await newHostKey(data, "rate");
    await Bun.sleep(1000);
    // At most 5 a minute; a minute boundary inside the loop restarts the count once, so a
    // 429 comes within 11 requests.
    const answers = [];
    for (let i = 0; i < 11 && answers.at(-1)?.status !== 429; i++)
      answers.push(await manage(server.url, "GET", "/stores?limit=1", { key: own }));
    const limited = answers.at(-1);
    expect(limited?.status).toBe(429);
    expect(limited?.json.error.code).toBe("rate_limited");
    expect(limited?.headers.get("RateLimit-Limit")).toBe("5");
    expect(limited?.headers.get("RateLimit-Remaining")).toBe("0");
    expect(Number(limited?.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(answers[0].headers.get("RateLimit-Limit")).toBe("5");
    expect(answers[0].headers.get("RateLimit-Remaining")).toBe("4");
    // Another host key has its own count.
    expect((await manage(server.url, "GET", "/stores?limit=1", { key: hostKey })).status).toBe(200);
  });
});
