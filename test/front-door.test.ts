import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  ALL_WRITE,
  type ApiAnswer,
  KEYS,
  otherStore,
  startTestServer,
  type TestServer,
  testStore,
} from "./helpers";

/** Black-box: the key checks of api-contract.md §3 on the real server. */

const DELETED = "svc_sk_deletedKey00000000000000000000000000006";
const EXPIRED = "svc_sk_expiredKey00000000000000000000000000007";
const FUTURE = "svc_sk_expiresLater000000000000000000000000008";
const POOR = "svc_sk_poorStoreKey0000000000000000000000005";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    stores: [
      testStore({
        keys: [
          { name: "all", secret: KEYS.all, permissions: ALL_WRITE },
          { name: "read", secret: KEYS.read, permissions: { orders: "read" } },
          { name: "deleted", secret: DELETED, permissions: ALL_WRITE, deleted: true },
          {
            name: "expired",
            secret: EXPIRED,
            permissions: ALL_WRITE,
            expiresAt: "2020-01-01T00:00:00Z",
          },
          {
            name: "future",
            secret: FUTURE,
            permissions: ALL_WRITE,
            expiresAt: "2099-01-01T00:00:00Z",
          },
        ],
      }),
      otherStore(),
      testStore({
        slug: "poor",
        domain: "poor.test",
        plan: "starter",
        keys: [{ name: "p", secret: POOR, permissions: ALL_WRITE }],
      }),
    ],
    // Enough failures allowed that this file's own 401s never block 127.0.0.1.
    flags: { "auth-failure-limit": "1000" },
  });
});
afterAll(() => server.stop());

/** An authenticated answer: not 401, carries the rate headers (no route needed). */
const isAuthenticated = (answer: ApiAnswer) =>
  answer.status === 404 && answer.headers.get("ratelimit-limit") === "120";
const probe = "/api/v1/__front-door-probe";

describe("401 unauthorized", () => {
  const causes: Array<[string, Record<string, string>]> = [
    ["missing", {}],
    ["malformed: not the format", { Authorization: "Bearer svc_sk_tooShort" }],
    ["malformed: wrong scheme", { Authorization: `Basic ${KEYS.all}` }],
    ["malformed: Bearer without a key", { Authorization: "Bearer " }],
    ["malformed: empty X-Api-Key", { "X-Api-Key": "" }],
    ["malformed: two keys", { Authorization: `Bearer ${KEYS.all} ${KEYS.all}` }],
    ["unknown", { Authorization: "Bearer svc_sk_unknownUnknownUnknownUnknownUnknown0" }],
    ["unknown, by X-Api-Key", { "X-Api-Key": "svc_sk_unknownUnknownUnknownUnknownUnknown0" }],
    ["deleted", { Authorization: `Bearer ${DELETED}` }],
    ["expired", { Authorization: `Bearer ${EXPIRED}` }],
    ["another store's key", { Authorization: `Bearer ${KEYS.other}` }],
    [
      "a key differing in case",
      { Authorization: `Bearer ${KEYS.all.toUpperCase().replace("SVC_SK_", "svc_sk_")}` },
    ],
  ];

  test("every cause answers 401 with a byte-identical body that holds no request id", async () => {
    const bodies = new Set<string>();
    for (const [cause, headers] of causes) {
      const answer = await server.request(probe, {
        key: null,
        headers: { ...headers, "X-Request-Id": `cause-${bodies.size}` },
      });
      expect([cause, answer.status]).toEqual([cause, 401]);
      expect(answer.text).not.toContain(answer.headers.get("x-request-id") ?? "none");
      expect(answer.headers.get("ratelimit-limit")).toBeNull();
      expect(answer.headers.get("content-type")).toBe("application/json; charset=utf-8");
      bodies.add(answer.text);
    }
    expect([...bodies]).toEqual([
      JSON.stringify({
        ok: false,
        error: {
          code: "unauthorized",
          message:
            "A valid API key is required: send it as 'Authorization: Bearer <key>' or 'X-Api-Key: <key>'.",
        },
      }),
    ]);
  });

  test("the same keys work where they belong: other store's key on its host, unexpired key", async () => {
    expect(
      isAuthenticated(await server.request(probe, { host: "shop2.test", key: KEYS.other })),
    ).toBe(true);
    expect(isAuthenticated(await server.request(probe, { key: FUTURE }))).toBe(true);
  });

  test("the key belongs to the store, not the host name: the platform subdomain works, another store's does not", async () => {
    expect(
      isAuthenticated(await server.request(probe, { host: "shop1.localhost", key: KEYS.all })),
    ).toBe(true);
    expect((await server.request(probe, { host: "shop2.localhost", key: KEYS.all })).status).toBe(
      401,
    );
  });
});

describe("header forms", () => {
  test("Authorization: Bearer (any case of the scheme) and X-Api-Key both work", async () => {
    const forms: Array<Record<string, string>> = [
      { Authorization: `Bearer ${KEYS.all}` },
      { Authorization: `bearer ${KEYS.all}` },
      { Authorization: `BEARER  ${KEYS.all}` },
      { "X-Api-Key": KEYS.all },
      { "x-api-key": KEYS.all },
    ];
    for (const headers of forms) {
      expect([
        headers,
        isAuthenticated(await server.request(probe, { key: null, headers })),
      ]).toEqual([headers, true]);
    }
  });

  test("both sent: Authorization wins, also when it is malformed (no fall-back to X-Api-Key)", async () => {
    const authWins = await server.request(probe, {
      key: null,
      headers: { Authorization: `Bearer ${KEYS.all}`, "X-Api-Key": "junk" },
    });
    expect(isAuthenticated(authWins)).toBe(true);
    const malformed = await server.request(probe, {
      key: null,
      headers: { Authorization: "Token abc", "X-Api-Key": KEYS.all },
    });
    expect(malformed.status).toBe(401);
    const unknown = await server.request(probe, {
      key: null,
      headers: { Authorization: `Bearer ${KEYS.other}`, "X-Api-Key": KEYS.all },
    });
    expect(unknown.status).toBe(401);
  });
});

describe("plans", () => {
  test("a store below growth answers 403 plan_required with no rate headers", async () => {
    const answer = await server.request(probe, { host: "poor.test", key: POOR });
    expect(answer.status).toBe(403);
    expect(answer.json).toEqual({
      ok: false,
      error: {
        code: "plan_required",
        message:
          'The API is not included in the store\'s "starter" plan; upgrade to growth or higher.',
      },
    });
    expect(
      [...answer.headers.keys()].filter((h) => h.startsWith("ratelimit") || h === "retry-after"),
    ).toEqual([]);
  });
});

describe("key_in_url", () => {
  test("an apikey query parameter is refused first, also with a valid key and on the old endpoint", async () => {
    for (const path of [
      `${probe}?apikey=${KEYS.all}`,
      "/api/product/update?apikey=x&id=1",
      "/healthz?apikey=",
      "/healthz?APIKEY=x",
      `${probe}?x=1&ApiKey=y`,
    ]) {
      const answer = await server.request(path);
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe("key_in_url");
    }
  });
});
