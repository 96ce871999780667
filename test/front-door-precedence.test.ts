import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type InProcessApp, startInProcess } from "./front-door-app";
import { ALL_WRITE, type ApiAnswer, statusAndCode as code, KEYS, testStore } from "./helpers";

/**
 * api-contract.md §2: a request failing two checks gets the earlier one's answer. Each
 * test pairs a check with the one after it. Runs the real app in-process on synthetic
 * routes with a clock the test moves, so rate and lockout windows are exact.
 */

const POOR_KEY = "svc_sk_poorStoreKey0000000000000000000000005";
const BAD_KEY = "svc_sk_doesNotExist000000000000000000000000";

const stores = [
  testStore(),
  testStore({
    slug: "poor",
    domain: "poor.test",
    plan: "starter",
    ownerEmail: "owner@poor.test",
    keys: [{ name: "p", secret: POOR_KEY, permissions: ALL_WRITE }],
  }),
];

let strict: InProcessApp; // HTTPS required, tight limits
let open: InProcessApp; // plain HTTP allowed
let roomy: InProcessApp; // plain HTTP allowed, default limits
beforeAll(async () => {
  roomy = await startInProcess({ stores }, KEYS.all);
  strict = await startInProcess(
    { stores, allowHttp: false, rateLimit: 3, authFailureLimit: 2 },
    KEYS.all,
  );
  open = await startInProcess(
    { stores, allowHttp: true, rateLimit: 3, authFailureLimit: 2 },
    KEYS.all,
  );
});
afterAll(async () => {
  await strict.stop();
  await open.stop();
  await roomy.stop();
});

const rateHeaders = (a: ApiAnswer) =>
  ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"].map((h) => a.headers.get(h));
let nextIp = 1;
/** A fresh client address per test, so lockouts do not leak between tests. */
const freshIp = () => `198.51.100.${nextIp++}`;

/** Fails keys from `ip` until it is blocked (limit 2). */
async function block(app: InProcessApp, ip: string) {
  expect(code(await app.request("/api/v1/things", { key: BAD_KEY, peerIp: ip, tls: true }))).toBe(
    "401 unauthorized",
  );
  expect(code(await app.request("/api/v1/things", { key: BAD_KEY, peerIp: ip, tls: true }))).toBe(
    "401 unauthorized",
  );
}

/** Moves the clock to the next minute so the key's rate window is fresh. */
const nextMinute = (app: InProcessApp) => {
  app.clock.now = (Math.floor(app.clock.now / 60_000) + 1) * 60_000 + 30_000;
};

async function exhaust(app: InProcessApp, key: string, ip: string) {
  nextMinute(app);
  for (let i = 0; i < 3; i++)
    expect((await app.request("/api/v1/things", { key, peerIp: ip, tls: true })).status).not.toBe(
      429,
    );
}

describe("order of checks", () => {
  test("1 key_in_url before everything: healthz, plain HTTP, unknown host, OPTIONS, blocked IP", async () => {
    const ip = freshIp();
    await block(strict, ip);
    for (const [path, options] of [
      ["/healthz?apikey=x", {}],
      ["/api/product/update?apikey=abc", { host: "nope.test" }],
      ["/api/v1/things?apikey=1", { method: "OPTIONS" }],
      ["/api/v1/things?x=1&apikey=", { key: "junk" }],
      ["/?apikey=1", { peerIp: ip }],
    ] as const) {
      const answer = await strict.request(path, options);
      expect(code(answer)).toBe("400 key_in_url");
      expect(rateHeaders(answer)).toEqual([null, null, null]);
    }
  });

  test("2 healthz, openapi.json and docs before https_required and without a key, even from a blocked IP", async () => {
    const ip = freshIp();
    await block(strict, ip);
    for (const path of ["/healthz", "/api/v1/openapi.json", "/api/v1/docs"]) {
      const answer = await strict.request(path, { key: null, host: "nope.test", peerIp: ip });
      expect(answer.status).toBe(200);
    }
  });

  test("3 https_required before path checks, OPTIONS and unknown host", async () => {
    for (const [path, method, host] of [
      ["/", "GET", "shop1.test"],
      ["/api/v2/orders", "GET", "shop1.test"],
      ["/api/v1/things", "OPTIONS", "shop1.test"],
      ["/api/v1/things", "GET", "nope.test"],
    ]) {
      const answer = await strict.request(path, { method, host, key: BAD_KEY });
      expect(code(answer)).toBe("403 https_required");
      expect(rateHeaders(answer)).toEqual([null, null, null]);
    }
  });

  test("4 path outside /api/v1 and OPTIONS before unknown host, no key needed", async () => {
    const outside = await strict.request("/api/v2/orders", {
      host: "nope.test",
      key: null,
      tls: true,
    });
    expect(code(outside)).toBe("404 not_found");
    expect(outside.json.error.message).toBe(
      "There is no endpoint at /api/v2/orders; the API lives under /api/v1/.",
    );
    const options = await strict.request("/api/v1/things", {
      method: "OPTIONS",
      host: "nope.test",
      key: null,
      tls: true,
    });
    expect(code(options)).toBe("405 method_not_allowed");
    expect(options.headers.get("allow")).toBe("GET, HEAD, POST");
    const optionsItem = await strict.request("/api/v1/things/5", {
      method: "OPTIONS",
      key: null,
      tls: true,
    });
    expect(optionsItem.headers.get("allow")).toBe("PATCH");
    const noSuchPath = await strict.request("/api/v1/nothing", {
      method: "OPTIONS",
      key: null,
      tls: true,
    });
    expect(code(noSuchPath)).toBe("404 not_found");
  });

  test("5 unknown host before a blocked IP", async () => {
    const ip = freshIp();
    await block(strict, ip);
    const answer = await strict.request("/api/v1/things", {
      host: "nope.test",
      peerIp: ip,
      tls: true,
    });
    expect(code(answer)).toBe("404 not_found");
    expect(answer.json.error.message).toBe(
      "No store is served at this host name; check the domain in the URL.",
    );
  });

  test("6 blocked IP before the key check: valid and invalid keys alike get 429 with Retry-After", async () => {
    const ip = freshIp();
    await block(strict, ip);
    for (const key of [KEYS.all, BAD_KEY, null]) {
      const answer = await strict.request("/api/v1/things", { key, peerIp: ip, tls: true });
      expect(code(answer)).toBe("429 too_many_failures");
      expect(answer.headers.get("retry-after")).toBe("600");
      expect(rateHeaders(answer)).toEqual([null, null, null]);
    }
  });

  test("7 a bad key before plan_required", async () => {
    const answer = await strict.request("/api/v1/things", {
      host: "poor.test",
      key: BAD_KEY,
      peerIp: freshIp(),
      tls: true,
    });
    expect(code(answer)).toBe("401 unauthorized");
  });

  test("8 plan_required before the rate limit: not counted, no rate headers", async () => {
    nextMinute(strict);
    for (let i = 0; i < 5; i++) {
      const answer = await strict.request("/api/v1/things", {
        host: "poor.test",
        key: POOR_KEY,
        tls: true,
      });
      expect(code(answer)).toBe("403 plan_required");
      expect(rateHeaders(answer)).toEqual([null, null, null]);
      expect(answer.headers.get("retry-after")).toBeNull();
    }
  });

  test("9 rate_limited before unknown path, wrong method and scope", async () => {
    const ip = freshIp();
    await exhaust(strict, KEYS.none, ip);
    for (const [path, method] of [
      ["/api/v1/nothing", "GET"],
      ["/api/v1/things", "DELETE"],
      ["/api/v1/things", "POST"],
    ]) {
      const answer = await strict.request(path, { method, key: KEYS.none, peerIp: ip, tls: true });
      expect(code(answer)).toBe("429 rate_limited");
      expect(answer.headers.get("retry-after")).toBe("30");
      expect(rateHeaders(answer)).toEqual(["3", "0", "30"]);
    }
  });

  test("10 unknown path and wrong method before insufficient_scope", async () => {
    nextMinute(strict);
    const unknown = await strict.request("/api/v1/nothing", { key: KEYS.none, tls: true });
    expect(code(unknown)).toBe("404 not_found");
    const wrongMethod = await strict.request("/api/v1/things", {
      method: "DELETE",
      key: KEYS.none,
      tls: true,
    });
    expect(code(wrongMethod)).toBe("405 method_not_allowed");
    expect(wrongMethod.headers.get("allow")).toBe("GET, HEAD, POST");
    const put = await strict.request("/api/v1/things/1", {
      method: "PUT",
      key: KEYS.none,
      tls: true,
    });
    expect(put.headers.get("allow")).toBe("PATCH");
  });

  test("11 insufficient_scope before body checks", async () => {
    nextMinute(strict);
    const answer = await strict.request("/api/v1/things", {
      method: "POST",
      key: KEYS.read,
      raw: "{",
      headers: { "Content-Type": "text/plain" },
      tls: true,
    });
    expect(code(answer)).toBe("403 insufficient_scope");
    expect(answer.json.error.message).toBe(
      'This key lacks the "products:write" permission this endpoint needs.',
    );
  });

  test("12 415 before invalid_json before a non-object body before parameter checks", async () => {
    const patch = (raw: string, type = "application/json") =>
      roomy.request("/api/v1/things/abc", {
        method: "PATCH",
        raw,
        headers: { "Content-Type": type },
      });
    expect(code(await patch("{", "text/plain"))).toBe("415 json_required");
    expect(code(await patch("{"))).toBe("400 invalid_json");
    const array = await patch("[]");
    expect(code(array)).toBe("400 invalid_field");
    expect(array.json.error.field).toBe("body");
    expect(code(await patch("{}", "application/json; charset=utf-8"))).toBe(
      "400 invalid_parameter",
    );
  });

  test("13 path parameters before query before body fields", async () => {
    const badParam = await roomy.request("/api/v1/things/abc?zzz=1", {
      method: "PATCH",
      body: { bogus: 1 },
    });
    expect(code(badParam)).toBe("400 invalid_parameter");
    expect(badParam.json.error.field).toBe("id");
    const badQuery = await roomy.request("/api/v1/things/1?zzz=1", {
      method: "PATCH",
      body: { bogus: 1 },
    });
    expect(code(badQuery)).toBe("400 invalid_parameter");
    expect(badQuery.json.error.field).toBe("zzz");
    const badField = await roomy.request("/api/v1/things/1", {
      method: "PATCH",
      body: { name: "x", bogus: 1 },
    });
    expect(code(badField)).toBe("400 invalid_field");
    expect(badField.json.error.field).toBe("bogus");
    for (const answer of [badParam, badQuery, badField])
      expect(answer.headers.get("ratelimit-limit")).toBe("120");
  });
});

describe("rate headers", () => {
  test("on every authenticated answer, errors included; never on answers before authentication", async () => {
    nextMinute(open);
    open.clock.now += 12_345; // 42.345 s into the minute: 18 s left
    const answers = [
      await open.request("/api/v1/things"),
      await open.request("/api/v1/nothing", { key: KEYS.none }),
      await open.request("/api/v1/things", { method: "POST", body: { name: "x" }, key: KEYS.read }),
    ];
    expect(answers.map(code)).toEqual(["200 ok", "404 not_found", "403 insufficient_scope"]);
    expect(answers.map(rateHeaders)).toEqual([
      ["3", "2", "18"],
      ["3", "2", "18"],
      ["3", "2", "18"],
    ]);
    const more = [
      await open.request("/api/v1/things", { method: "DELETE" }),
      await open.request("/api/v1/things", {
        method: "POST",
        raw: "x",
        headers: { "Content-Type": "text/plain" },
      }),
    ];
    expect(more.map(code)).toEqual(["405 method_not_allowed", "415 json_required"]);
    expect(more.map(rateHeaders)).toEqual([
      ["3", "1", "18"],
      ["3", "0", "18"],
    ]);
    const limited = await open.request("/api/v1/things");
    expect(code(limited)).toBe("429 rate_limited");
    expect(limited.headers.get("retry-after")).toBe("18");
    expect(limited.json.error.message).toBe(
      "This key has used its 3 requests for this minute; retry in 18 seconds.",
    );
    open.clock.now += 18_000;
    expect(rateHeaders(await open.request("/api/v1/things"))).toEqual(["3", "2", "60"]);
  });

  test("exactly `limit` of many concurrent requests pass in one window", async () => {
    const app = await startInProcess({ stores, rateLimit: 30 }, KEYS.all);
    try {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => app.request("/api/v1/things")),
      );
      expect(answers.filter((a) => a.status === 200).length).toBe(30);
      expect(answers.filter((a) => code(a) === "429 rate_limited").length).toBe(20);
      const remaining = answers
        .filter((a) => a.status === 200)
        .map((a) => Number(a.headers.get("ratelimit-remaining")));
      expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    } finally {
      await app.stop();
    }
  });
});

describe("failed-key lockout", () => {
  test("the limit-th failure is still 401; then 429 with the seconds left, until the block ends", async () => {
    const app = await startInProcess({ stores, authFailureLimit: 3 }, KEYS.all);
    try {
      const ip = "203.0.113.50";
      for (let i = 0; i < 3; i++)
        expect(code(await app.request("/api/v1/things", { key: BAD_KEY, peerIp: ip }))).toBe(
          "401 unauthorized",
        );
      const blocked = await app.request("/api/v1/things", { peerIp: ip });
      expect(code(blocked)).toBe("429 too_many_failures");
      expect(blocked.headers.get("retry-after")).toBe("600");
      expect(blocked.json.error.message).toBe(
        "Too many requests with invalid API keys came from this address; try again in 600 seconds.",
      );
      expect(code(await app.request("/api/v1/things", { peerIp: "203.0.113.51" }))).toBe("200 ok");
      app.clock.now += 599_500;
      expect((await app.request("/api/v1/things", { peerIp: ip })).headers.get("retry-after")).toBe(
        "1",
      );
      app.clock.now += 500;
      expect(code(await app.request("/api/v1/things", { peerIp: ip }))).toBe("200 ok");
    } finally {
      await app.stop();
    }
  });

  test("a burst of bad keys at a store's first request is counted exactly (they all wait for its keys)", async () => {
    const app = await startInProcess({ stores, authFailureLimit: 3 }, KEYS.all);
    try {
      const burst = Array.from({ length: 10 }, () =>
        app.request("/api/v1/things", { key: BAD_KEY, peerIp: "203.0.113.55" }),
      );
      const codes = (await Promise.all(burst)).map(code).sort();
      expect(codes).toEqual([
        ...Array(3).fill("401 unauthorized"),
        ...Array(7).fill("429 too_many_failures"),
      ]);
    } finally {
      await app.stop();
    }
  });

  test("a success does not reset the count; failures older than 10 minutes drop out", async () => {
    const app = await startInProcess({ stores, authFailureLimit: 3 }, KEYS.all);
    try {
      const ip = "203.0.113.60";
      const fail = () => app.request("/api/v1/things", { key: BAD_KEY, peerIp: ip });
      expect(code(await fail())).toBe("401 unauthorized");
      app.clock.now += 5 * 60_000;
      expect(code(await fail())).toBe("401 unauthorized");
      expect(code(await app.request("/api/v1/things", { peerIp: ip }))).toBe("200 ok");
      app.clock.now += 5 * 60_000; // the first failure is now exactly 10 minutes old: out
      expect(code(await fail())).toBe("401 unauthorized");
      expect(code(await app.request("/api/v1/things", { peerIp: ip }))).toBe("200 ok");
      expect(code(await fail())).toBe("401 unauthorized"); // third within the window
      expect(code(await app.request("/api/v1/things", { peerIp: ip }))).toBe(
        "429 too_many_failures",
      );
    } finally {
      await app.stop();
    }
  });

  test("every 401 cause counts: missing, malformed, unknown, other store's key", async () => {
    const app = await startInProcess({ stores, authFailureLimit: 4 }, KEYS.all);
    try {
      const ip = "203.0.113.70";
      const causes = [{ key: null }, { key: "svc_sk_short" }, { key: BAD_KEY }, { key: POOR_KEY }];
      for (const cause of causes)
        expect(code(await app.request("/api/v1/things", { ...cause, peerIp: ip }))).toBe(
          "401 unauthorized",
        );
      expect(code(await app.request("/api/v1/things", { peerIp: ip }))).toBe(
        "429 too_many_failures",
      );
    } finally {
      await app.stop();
    }
  });

  test("IPv6 clients are counted per /64", async () => {
    const app = await startInProcess({ stores, authFailureLimit: 2 }, KEYS.all);
    try {
      await app.request("/api/v1/things", { key: BAD_KEY, peerIp: "2001:db8:1:2::1" });
      await app.request("/api/v1/things", { key: BAD_KEY, peerIp: "2001:db8:1:2::2" });
      expect(code(await app.request("/api/v1/things", { peerIp: "2001:db8:1:2:ffff::3" }))).toBe(
        "429 too_many_failures",
      );
      expect(code(await app.request("/api/v1/things", { peerIp: "2001:db8:1:3::1" }))).toBe(
        "200 ok",
      );
    } finally {
      await app.stop();
    }
  });
});
