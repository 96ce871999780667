import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { apiRoutes } from "../../src/routes";
import {
  expectEnvelope,
  KEYS,
  otherStore,
  startTestServer,
  type TestServer,
  testStore,
} from "../helpers";

/**
 * Whatever a client sends, the answer is a well-formed envelope with a 4xx (or a
 * success), never a 5xx, and the server stays up. Property-based over every route.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    stores: [testStore(), otherStore()],
    flags: { "rate-limit": "100000000", "auth-failure-limit": "100000000" },
  });
});
afterAll(() => server.stop());

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

/** A concrete path for a route, with each `:param` replaced by `value`. */
const pathFor = (path: string, value: string) => `/api/v1${path.replace(/:[^/]+/g, value)}`;

const hostileSegment = fc.oneof(
  fc.constantFrom(
    "0",
    "-1",
    "1.5",
    "1e3",
    "0x10",
    "99999999999999999999",
    "%2e%2e%2f%2e%2e",
    "..",
    "%00",
    "NaN",
    " 1",
    "1 ",
    "%F0%9F%92%A9",
    "%C3%28",
  ),
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
);

const hostileQuery = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(
          "limit",
          "cursor",
          "created_since",
          "updated_since",
          "status",
          "paid",
          "email",
          "apikey_",
          "x",
        ),
        fc.string({ maxLength: 8 }),
      ),
      fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.constantFrom("0", "101", "-5", "true", "yes", "2026-13-45", "9".repeat(400)),
      ),
    ),
    { maxLength: 4 },
  )
  .map((pairs) =>
    pairs.length
      ? `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")}`
      : "",
  );

const deep = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

const hostileBody = fc.oneof(
  fc.json().map((text) => ({ raw: text })),
  fc.anything({ maxDepth: 3 }).map((value) => ({ raw: JSON.stringify(value) ?? "null" })),
  fc
    .dictionary(
      fc.constantFrom(
        "email",
        "name",
        "price",
        "status",
        "paid",
        "items",
        "active",
        "notes",
        "stock",
        "sku",
        "id",
        "trackingNumber",
        "handled",
        "firstName",
      ),
      fc.oneof(
        fc.string({ maxLength: 20 }),
        fc.double(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 3 }),
        fc.constant("x".repeat(6000)),
        fc.constant(1e308),
        fc.constant(-0),
        fc.constant("\u0000\uFFFF\uD83D"),
      ),
    )
    .map((obj) => ({ raw: JSON.stringify(obj) })),
  fc.constantFrom(
    { raw: "{" },
    { raw: "" },
    { raw: "null" },
    { raw: "[]" },
    { raw: '"text"' },
    { raw: `{"items": ${deep(5000)}}` },
    { raw: deep(20000) },
    { raw: '{"email": "\\ud800"}' },
    { raw: '{"__proto__": {"admin": true}, "constructor": {"prototype": {}}}' },
    { raw: `{"name": "${"א".repeat(200)}", "price": 1}` },
  ),
);

const contentTypes = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "application/json; charset=latin1",
  "",
  "multipart/form-data; boundary=x",
);

describe("hostile input never causes a 5xx", () => {
  test("odd paths, methods and query strings", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          ...new Set(apiRoutes.map((r) => r.path)),
          "/orders",
          "/nope",
          "/products/batch",
        ),
        hostileSegment,
        hostileQuery,
        fc.constantFrom("GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"),
        async (path, segment, query, method) => {
          const answer = await server.request(pathFor(path, segment) + query, {
            method,
            raw: method === "GET" || method === "HEAD" ? undefined : "{}",
            headers: { "Content-Type": "application/json" },
          });
          if (method === "HEAD") {
            expect(answer.status).toBeLessThan(500);
            return;
          }
          expectEnvelope(answer, `${method} ${pathFor(path, segment)}${query}`);
        },
      ),
      { numRuns: RUNS * 3 },
    );
  });

  test("random and malformed bodies on every write route", async () => {
    const writes = apiRoutes.filter((r) => r.method !== "GET");
    if (writes.length === 0) return;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...writes),
        hostileBody,
        contentTypes,
        fc.constantFrom("1", "2", "999"),
        async (route, body, type, id) => {
          const answer = await server.request(pathFor(route.path, id), {
            method: route.method,
            raw: body.raw,
            headers: { "Content-Type": type, "Idempotency-Key": `fuzz-${Math.random()}` },
          });
          expectEnvelope(answer, `${route.method} ${route.path} ${type} ${body.raw.slice(0, 100)}`);
        },
      ),
      { numRuns: RUNS * 3 },
    );
  });

  test("invalid UTF-8, oversized and chunked bodies", async () => {
    const route = apiRoutes.find((r) => r.method !== "GET");
    const path = route ? pathFor(route.path, "1") : "/api/v1/customers";
    const method = route?.method ?? "POST";
    const invalidUtf8 = new Uint8Array([
      0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d,
    ]);
    const cases: Array<[string, BodyInit]> = [
      ["invalid utf-8", invalidUtf8],
      ["2 MiB", `{"notes": "${"x".repeat(2 * 1024 * 1024)}"}`],
      [
        "chunked 3 MiB",
        new ReadableStream({
          start(controller) {
            for (let i = 0; i < 48; i++)
              controller.enqueue(new TextEncoder().encode("x".repeat(65536)));
            controller.close();
          },
        }),
      ],
    ];
    for (const [name, body] of cases) {
      const response = await fetch(server.url + path, {
        method,
        headers: {
          Host: "shop1.test",
          Authorization: `Bearer ${KEYS.all}`,
          "Content-Type": "application/json",
        },
        body,
      });
      const text = await response.text();
      const answer = {
        status: response.status,
        headers: response.headers,
        text,
        json: JSON.parse(text),
      };
      expectEnvelope(answer, name);
      expect(answer.status, name).toBe(name === "invalid utf-8" ? 400 : 413);
    }
  });

  test("bad headers", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          authorization: fc.oneof(
            fc.constant(`Bearer ${KEYS.all}`),
            fc.string({ maxLength: 300 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
            fc.constant(`Bearer ${"a".repeat(10000)}`),
            fc.constant("Bearer  svc_sk_"),
          ),
          host: fc.oneof(
            fc.constantFrom(
              "shop1.test",
              "SHOP1.TEST:443",
              "shop2.localhost",
              "[::1]:80",
              "shop1.test.",
              "..",
              "a".repeat(300),
            ),
            fc.domain(),
          ),
          requestId: fc.string({ maxLength: 200 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
          idempotencyKey: fc.string({ maxLength: 300 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
        }),
        async (h) => {
          const answer = await server.request("/api/v1/customers", {
            method: "POST",
            host: h.host,
            key: null,
            body: { email: `fuzz${Math.random()}@example.test` },
            headers: {
              Authorization: h.authorization,
              "X-Request-Id": h.requestId,
              "Idempotency-Key": h.idempotencyKey,
            },
          });
          expectEnvelope(answer, JSON.stringify(h).slice(0, 200));
        },
      ),
      { numRuns: RUNS },
    );
  });

  test("the server is still up and consistent afterwards", async () => {
    const health = await server.request("/healthz");
    expect(health.status).toBe(200);
    const list = await server.request("/api/v1/orders?limit=1", { key: KEYS.read });
    expect(list.status).toBeLessThan(500);
  });
});
