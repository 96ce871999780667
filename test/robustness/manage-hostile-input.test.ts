import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { manageRoutes } from "../../src/manage/routes";
import {
  expectEnvelope,
  otherStore,
  readAnswer,
  startTestServer,
  type TestServer,
  testStore,
} from "../helpers";
import { newHostKey } from "../manage-support";

/**
 * What a host sends to the management API never causes a 5xx: odd paths, methods, query
 * strings and bodies on every route answer a well-formed envelope, and the server stays
 * up. Property-based, like the store API's test/robustness/hostile-input.test.ts.
 */

let server: TestServer;
let hostKey: string;
beforeAll(async () => {
  server = await startTestServer({
    stores: [testStore(), otherStore()],
    flags: { "manage-rate-limit": "100000000", "auth-failure-limit": "100000000" },
  });
  hostKey = await newHostKey(server.dataDir);
  // The server re-reads host keys within 250 ms of the CLI's change.
  const deadline = Date.now() + 30_000;
  while ((await call("GET", "/stores")).status !== 200 && Date.now() < deadline)
    await Bun.sleep(100);
});
afterAll(() => server.stop());

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

async function call(method: string, path: string, body?: string, type = "application/json") {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${hostKey}`,
    "Idempotency-Key": `fuzz-${Math.random()}`,
  };
  if (body !== undefined) headers["Content-Type"] = type;
  return readAnswer(await fetch(`${server.url}/manage/v1${path}`, { method, headers, body }));
}

/** A concrete path: `:slug` a store that exists (or a hostile one), other parameters `id`. */
const pathFor = (path: string, slug: string, id: string) =>
  path.replace(":slug", slug).replace(/:[^/]+/g, id);

const segment = fc.oneof(
  fc.constantFrom("1", "0", "-1", "1.5", "99999999999999999999", "..", "%00", "%C3%28", "NaN"),
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
);
const slug = fc.oneof(fc.constantFrom("shop1", "shop2", "nope", "SHOP1", "a".repeat(200)), segment);

const query = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom("limit", "cursor", "since", "plan", "x"),
        fc.string({ maxLength: 8 }),
      ),
      fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom("0", "101", "-5", "9".repeat(400))),
    ),
    { maxLength: 3 },
  )
  .map((pairs) =>
    pairs.length
      ? `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")}`
      : "",
  );

const value = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant("x".repeat(6000)),
  fc.constant(1e308),
  fc.constant("\u0000\uFFFF\uD83D"),
  fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 10 }), fc.anything({ maxDepth: 1 }), { maxKeys: 3 }),
);

const body = fc.oneof(
  fc.json(),
  fc.anything({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null"),
  fc
    .dictionary(
      fc.constantFrom(
        "slug",
        "name",
        "domain",
        "plan",
        "ownerEmail",
        "settings",
        "permissions",
        "expires",
        "orderStatuses",
        "number",
        "status",
        "customer",
        "items",
        "email",
        "firstName",
        "total",
        "at",
        "origin",
      ),
      value,
    )
    .map((fields) => JSON.stringify(fields)),
  fc.constantFrom("{", "", "null", "[]", '"text"', "[".repeat(20000) + "]".repeat(20000)),
);

describe("hostile input to the management API never causes a 5xx", () => {
  test("odd paths, methods and query strings on every route", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...new Set(manageRoutes.map((r) => r.path)), "/nope", "/stores/shop1/x"),
        slug,
        segment,
        query,
        fc.constantFrom("GET", "POST", "PATCH", "PUT", "DELETE", "OPTIONS"),
        async (path, store, id, search, method) => {
          const target = pathFor(path, store, id) + search;
          const answer = await call(method, target, method === "GET" ? undefined : "{}");
          expectEnvelope(answer, `${method} ${target}`);
        },
      ),
      { numRuns: RUNS * 3 },
    );
  });

  test("random and malformed bodies on every write route", async () => {
    const writes = manageRoutes.filter((r) => r.method !== "GET" && r.method !== "DELETE");
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...writes),
        body,
        // Mostly JSON, so that most bodies get past the content type to the fields.
        fc.constantFrom("application/json", "application/json", "application/json", "text/plain"),
        fc.constantFrom("1", "2", "999"),
        async (route, raw, type, id) => {
          const target = pathFor(route.path, "shop1", id);
          const answer = await call(route.method, target, raw, type);
          expectEnvelope(answer, `${route.method} ${target} ${type} ${raw.slice(0, 100)}`);
        },
      ),
      { numRuns: RUNS * 4 },
    );
  });

  test("the server is still up afterwards", async () => {
    expect((await call("GET", "/stores")).status).toBe(200);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
