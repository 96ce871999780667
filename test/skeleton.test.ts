import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, startTestServer, type TestServer, testStore } from "./helpers";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    stores: [testStore(), testStore({ slug: "poor", domain: "poor.test", plan: "starter" })],
  });
});
afterAll(() => server.stop());

describe("HTTP skeleton", () => {
  test("healthz answers on any host without a key", async () => {
    const answer = await server.request("/healthz", { host: "nowhere.example", key: null });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ ok: true, data: { status: "ok" } });
    expect(answer.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(answer.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("a well-formed request id is echoed, a bad one replaced", async () => {
    const echoed = await server.request("/healthz", {
      headers: { "X-Request-Id": "abc.DEF:1-2_3" },
    });
    expect(echoed.headers.get("x-request-id")).toBe("abc.DEF:1-2_3");
    const replaced = await server.request("/healthz", { headers: { "X-Request-Id": "bad id!" } });
    expect(replaced.headers.get("x-request-id")).not.toBe("bad id!");
  });

  test("apikey in the query is refused before anything else", async () => {
    const answer = await server.request("/api/product/update?apikey=x", {
      host: "nowhere.example",
      key: null,
    });
    expect(answer.status).toBe(400);
    expect(answer.json.error.code).toBe("key_in_url");
  });

  test("paths outside /api/v1 are 404 without a key", async () => {
    for (const path of ["/", "/api/product/update", "/api/v2/orders"]) {
      const answer = await server.request(path, { key: null });
      expect(answer.status).toBe(404);
      expect(answer.json.ok).toBe(false);
      expect(answer.json.error.code).toBe("not_found");
    }
  });

  test("OPTIONS is 405 with Allow, or 404 for no such path; never CORS headers", async () => {
    const known = await server.request("/api/v1/healthz-nope", { method: "OPTIONS", key: null });
    expect(known.status).toBe(404);
    const health = await server.request("/healthz", {
      method: "OPTIONS",
      key: null,
      headers: { Origin: "https://evil.example" },
    });
    expect(health.status).toBe(405);
    expect(health.headers.get("allow")).toBe("GET, HEAD");
    expect([...health.headers.keys()].filter((h) => h.startsWith("access-control"))).toEqual([]);
  });

  test("unknown host is 404, unknown key 401, low plan 403", async () => {
    expect((await server.request("/api/v1/orders", { host: "nope.test" })).json.error.code).toBe(
      "not_found",
    );
    const unauthorized = await server.request("/api/v1/orders", {
      key: "svc_sk_unknownunknownunknownunknownunknown0",
    });
    expect(unauthorized.status).toBe(401);
    const poor = await server.request("/api/v1/orders", { host: "poor.test", key: KEYS.all });
    expect(poor.status).toBe(403);
    expect(poor.json.error.code).toBe("plan_required");
  });

  test("the platform subdomain reaches the same store, port ignored, any case", async () => {
    const answer = await server.request("/api/v1/nothing-here", { host: "SHOP1.localhost:8080" });
    expect(answer.status).toBe(404);
    expect(answer.headers.get("ratelimit-limit")).toBe("120");
  });
});
