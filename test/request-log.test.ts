import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadFixture } from "../src/load/load";
import { KEYS, send, tempDir, testStore } from "./helpers";
import { spawnServer } from "./process";
import { testLocation } from "./sqld";

const dataDir = tempDir("storeapi-log-");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("request log", () => {
  test("one JSON line per request with the contract's fields, never a key or a body", async () => {
    await loadFixture(await testLocation(dataDir), { stores: [testStore()] });
    const server = await spawnServer(dataDir);
    const wrongKey = "svc_sk_neverLogThisWrongKey000000000000000000";
    await send(server.url, "/api/v1/customers?limit=1", {
      key: KEYS.read,
      headers: { "X-Request-Id": "log-test-1" },
    });
    await send(server.url, "/api/v1/customers", {
      key: null,
      headers: { "X-Api-Key": KEYS.all, "X-Request-Id": "log-test-2" },
      method: "POST",
      body: { email: "secret-body@example.test" },
    });
    await send(server.url, "/api/v1/orders", {
      key: wrongKey,
      headers: { "X-Request-Id": "log-test-3" },
    });
    // A key pasted into the path (a client's mistake) is logged as its hint only.
    const pastedHostKey = "svc_hk_pastedIntoThePath0000000000000000000";
    await send(server.url, `/api/v1/orders/${KEYS.all}`, {
      headers: { "X-Request-Id": "log-test-4" },
    });
    await send(server.url, `/manage/v1/stores/${pastedHostKey}`, {
      key: null,
      headers: { "X-Request-Id": "log-test-5" },
    });
    // A path of "/*" ran the request log twice (Hono's router took it for its wildcard).
    await send(server.url, "/*", { key: null, headers: { "X-Request-Id": "log-test-6" } });
    // Anyone's 12 KB path is logged cut to 1,000 characters.
    const longPath = `/${"p".repeat(12_000)}`;
    await send(server.url, longPath, { key: null, headers: { "X-Request-Id": "log-test-7" } });
    expect(await server.signal("SIGTERM")).toBe(0);
    const output = server.stdout();
    for (const secret of [KEYS.read, KEYS.all, wrongKey, pastedHostKey, "secret-body@example.test"])
      expect(output).not.toContain(secret);
    const lines = output
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const byId = (id: string) => lines.find((l) => l.requestId === id);
    expect(Object.keys(byId("log-test-1")).sort()).toEqual([
      "ip",
      "keyId",
      "level",
      "method",
      "ms",
      "path",
      "requestId",
      "status",
      "store",
      "time",
    ]);
    expect(byId("log-test-1")).toMatchObject({
      ip: "127.0.0.1",
      store: "shop1",
      keyId: 2,
      method: "GET",
      path: "/api/v1/customers",
      status: 200,
    });
    expect(byId("log-test-2")).toMatchObject({
      store: "shop1",
      keyId: 1,
      method: "POST",
      status: 201,
    });
    expect(byId("log-test-3")).toMatchObject({ store: "shop1", keyId: null, status: 401 });
    expect(byId("log-test-4").path).toBe(`/api/v1/orders/svc_sk_…${KEYS.all.slice(-4)}`);
    expect(byId("log-test-5").path).toBe("/manage/v1/stores/svc_hk_…0000");
    expect(
      lines.filter((l) => l.requestId === "log-test-6").map((l) => [l.path, l.status]),
    ).toEqual([["/%2A", 404]]);
    expect(byId("log-test-7").path).toBe(`${longPath.slice(0, 1_000)}…`);
  });

  test("behind a trusted proxy the line carries the forwarded client IP, also for a request refused before the proxy check", async () => {
    const server = await spawnServer(dataDir, ["--trust-proxy", "127.0.0.1/32"]);
    const proxied = {
      "X-Forwarded-For": "198.51.100.1, 203.0.113.7",
      "X-Forwarded-Proto": "https",
    };
    await send(server.url, "/api/v1/customers?limit=1", {
      key: KEYS.read,
      headers: { ...proxied, "X-Request-Id": "ip-1" },
    });
    await send(server.url, "/api/v1/customers?apikey=x", {
      key: null,
      headers: { ...proxied, "X-Request-Id": "ip-2" },
    });
    await send(server.url, "/healthz", { key: null, headers: { "X-Request-Id": "ip-3" } });
    expect(await server.signal("SIGTERM")).toBe(0);
    const lines = server
      .stdout()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const ipOf = (id: string) => lines.find((l) => l.requestId === id)?.ip;
    expect([ipOf("ip-1"), ipOf("ip-2"), ipOf("ip-3")]).toEqual([
      "203.0.113.7",
      "203.0.113.7",
      "127.0.0.1",
    ]);
    expect(lines.filter((l) => l.msg?.startsWith("--trust-proxy"))).toEqual([]);
  });

  test("a --trust-proxy range of every address is warned about at start", async () => {
    const server = await spawnServer(dataDir, ["--trust-proxy", "10.0.0.0/8,::/0"]);
    expect(await server.signal("SIGTERM")).toBe(0);
    const warnings = server
      .stdout()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter((l) => l.level === "warn" && l.msg?.startsWith("--trust-proxy"))
      .map((l) => l.msg);
    expect(warnings).toEqual([
      "--trust-proxy trusts every address: any client can set X-Forwarded-For (its address for the lockout) and X-Forwarded-Proto; list only your proxies",
    ]);
  });
});
