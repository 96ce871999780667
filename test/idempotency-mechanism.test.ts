import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as v from "valibot";
import { IDEMPOTENCY_TTL_MS } from "../src/db/idempotency";
import { ApiError } from "../src/errors";
import { canonicalJson, fingerprint } from "../src/http/idempotency";
import { defineRoute, type RouteDef } from "../src/routes/define";
import { type InProcessApp, startInProcess } from "./front-door-app";
import { KEYS, testStore } from "./helpers";

/** The idempotency machinery on synthetic routes, with a clock the test moves. */

describe("canonical JSON and fingerprints", () => {
  test("keys sorted at every level, arrays kept in order, no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: "x" } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}',
    );
    expect(canonicalJson(JSON.parse('{ "n" : 1.50, "e": 1e2, "s": "\\u00e9" }'))).toBe(
      '{"e":100,"n":1.5,"s":"é"}',
    );
    expect(canonicalJson([])).toBe("[]");
    expect(canonicalJson({})).toBe("{}");
  });

  test("method, path and body each make a request different", () => {
    const base = fingerprint("POST", "/api/v1/customers", { email: "a@b.c" });
    expect(fingerprint("POST", "/api/v1/customers", { email: "a@b.c" })).toBe(base);
    expect(fingerprint("PATCH", "/api/v1/customers", { email: "a@b.c" })).not.toBe(base);
    expect(fingerprint("POST", "/api/v1/products", { email: "a@b.c" })).not.toBe(base);
    expect(fingerprint("POST", "/api/v1/customers", { email: "a@b.d" })).not.toBe(base);
    expect(fingerprint("POST", "/api/v1/customers", [{ email: "a@b.c" }])).not.toBe(base);
  });
});

/** How many times each synthetic create ran, and what it should do next. */
const runs = { count: 0 };
const plan: { fail: Array<"crash" | "rate_limited" | "not_found"> } = { fail: [] };

function syntheticCreate(path: string): RouteDef {
  return defineRoute({
    method: "POST",
    path,
    area: "products",
    summary: "synthetic create",
    body: v.strictObject({ name: v.string() }),
    async create(_c, { body }, tx) {
      runs.count++;
      const failure = plan.fail.shift();
      if (failure === "crash") throw new Error("database on fire");
      if (failure === "rate_limited")
        throw new ApiError("rate_limited", "Slow down.", {}, { "Retry-After": "5" });
      if (failure === "not_found") throw new ApiError("not_found", "No such parent.");
      await tx.run("INSERT INTO leads (name, created_at) VALUES (?, ?)", [body.name, 0]);
      return { status: 201, data: { name: body.name, run: runs.count } };
    },
  });
}

let app: InProcessApp;
beforeAll(async () => {
  app = await startInProcess(
    { stores: [testStore()], routes: [syntheticCreate("/things"), syntheticCreate("/others")] },
    KEYS.all,
  );
});
afterAll(() => app.stop());

const send = (path: string, name: string, key: string) =>
  app.request(`/api/v1${path}`, {
    method: "POST",
    body: { name },
    headers: { "Idempotency-Key": key },
  });

describe("a route that creates (idempotent by its definition)", () => {
  test("the same key on another path is a different request", async () => {
    expect((await send("/things", "a", "path-1")).status).toBe(201);
    const other = await send("/others", "a", "path-1");
    expect(other.status).toBe(400);
    expect(other.json.error).toMatchObject({ code: "invalid_parameter", field: "Idempotency-Key" });
  });

  test("a 5xx is not stored: the retry runs and succeeds", async () => {
    plan.fail = ["crash"];
    const before = runs.count;
    const crashed = await send("/things", "crash-1", "crash-1");
    expect(crashed.status).toBe(500);
    expect(crashed.json.error.code).toBe("server_error");
    const retry = await send("/things", "crash-1", "crash-1");
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(runs.count).toBe(before + 2);
  });

  test("a 429 is not stored", async () => {
    plan.fail = ["rate_limited"];
    const limited = await send("/things", "busy-1", "busy-1");
    expect(limited.status).toBe(429);
    const retry = await send("/things", "busy-1", "busy-1");
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
  });

  test("a 4xx from the create is stored; its rows are rolled back", async () => {
    plan.fail = ["not_found"];
    const before = runs.count;
    const first = await send("/things", "gone-1", "gone-1");
    expect(first.status).toBe(404);
    const again = await send("/things", "gone-1", "gone-1");
    expect(again.status).toBe(404);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(runs.count).toBe(before + 1);
  });

  test("an answer is replayed until 24 hours have passed, then the key is free", async () => {
    const first = await send("/things", "clock", "clock-1");
    expect(first.status).toBe(201);
    app.clock.now += IDEMPOTENCY_TTL_MS - 1;
    const within = await send("/things", "clock", "clock-1");
    expect(within.headers.get("idempotent-replayed")).toBe("true");
    expect(within.text).toBe(first.text);
    app.clock.now += 1;
    const after = await send("/things", "clock changed", "clock-1");
    expect(after.status).toBe(201);
    expect(after.headers.get("idempotent-replayed")).toBeNull();
    expect(after.json.data.name).toBe("clock changed");
  });

  test("concurrent duplicates run once; the others replay its answer", async () => {
    const before = runs.count;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => send("/things", "together", "together-1")),
    );
    expect(runs.count).toBe(before + 1);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true")).toHaveLength(9);
    expect((await send("/things", "different", "together-1")).status).toBe(400);
  });
});
