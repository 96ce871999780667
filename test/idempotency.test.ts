import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db } from "../src/db/driver";
import { documentedRequests } from "./contract";
import {
  ALL_WRITE,
  type ApiAnswer,
  KEYS,
  otherStore,
  startTestServer,
  type TestServer,
  testStore,
} from "./helpers";
import { testLocation } from "./sqld";

/** Idempotent creates over HTTP (api-contract.md §6), on POST /customers. */

const SECOND_KEY = "svc_sk_testSecondWriteKey000000000000000000005";

let server: TestServer;
beforeAll(async () => {
  const base = testStore();
  server = await startTestServer({
    stores: [
      testStore({
        keys: [
          ...(base.keys as unknown[]),
          { name: "second", secret: SECOND_KEY, permissions: ALL_WRITE },
        ],
        customers: [{ id: 1, email: "taken@example.com", createdAt: "2020-01-01" }],
      }),
      otherStore(),
    ],
  });
});
afterAll(() => server.stop());

/** Every answer is also checked against the OpenAPI document. */
const request: TestServer["request"] = (path, options) => documentedRequests(server)(path, options);

function create(
  body: unknown,
  idempotencyKey?: string,
  options: { key?: string; host?: string } = {},
) {
  const headers: Record<string, string> =
    idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey };
  return request("/api/v1/customers", { method: "POST", body, headers, ...options });
}

function createRaw(raw: string, idempotencyKey: string) {
  return request("/api/v1/customers", {
    method: "POST",
    raw,
    headers: { "Idempotency-Key": idempotencyKey, "Content-Type": "application/json" },
  });
}

async function customersWith(
  email: string,
  options: { key?: string; host?: string } = {},
): Promise<number> {
  const answer = await request(`/api/v1/customers?email=${encodeURIComponent(email)}`, options);
  return answer.json.data.length;
}

async function withStoreDb<T>(fn: (db: Db) => Promise<T>, slug = "shop1"): Promise<T> {
  const db = await (await testLocation(server.dataDir)).openStore(slug);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

function expectKeyError(answer: ApiAnswer) {
  expect(answer.status).toBe(400);
  expect(answer.json.error.code).toBe("invalid_parameter");
  expect(answer.json.error.field).toBe("Idempotency-Key");
}

const replayed = (answer: ApiAnswer) => answer.headers.get("idempotent-replayed");

describe("Idempotency-Key on POST /customers", () => {
  test("a repeat replays the first answer byte for byte and creates nothing", async () => {
    const first = await create({ email: "once@example.com", firstName: "Once" }, "replay-1");
    expect(first.status).toBe(201);
    expect(replayed(first)).toBeNull();
    const again = await create({ email: "once@example.com", firstName: "Once" }, "replay-1");
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(replayed(again)).toBe("true");
    expect(again.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await customersWith("once@example.com")).toBe(1);
  });

  test("key order and whitespace do not make a request different", async () => {
    const first = await createRaw(
      '{"email":"canon@example.com","firstName":"C","newsletter":true}',
      "canonical-1",
    );
    expect(first.status).toBe(201);
    const again = await createRaw(
      '{ "newsletter" : true,\n  "firstName": "C", "email": "canon@example.com" }',
      "canonical-1",
    );
    expect(again.status).toBe(201);
    expect(replayed(again)).toBe("true");
    expect(again.text).toBe(first.text);
  });

  test("the same key with a different body is 400 invalid_parameter and creates nothing", async () => {
    expect((await create({ email: "first@example.com" }, "mismatch-1")).status).toBe(201);
    expectKeyError(await create({ email: "second@example.com" }, "mismatch-1"));
    expectKeyError(await create({ email: "first@example.com", firstName: "F" }, "mismatch-1"));
    expect(await customersWith("second@example.com")).toBe(0);
  });

  test("malformed keys are 400 invalid_parameter, checked before the body", async () => {
    for (const bad of ["", "has space", "x".repeat(256), "tab\there", "\u00e9t\u00e9"]) {
      expectKeyError(await create({ email: "badkey@example.com" }, bad));
    }
    expectKeyError(await create({ email: "not an email" }, "bad key"));
    expect(await customersWith("badkey@example.com")).toBe(0);
  });

  test("keys of 1 and 255 visible ASCII characters are accepted", async () => {
    expect((await create({ email: "short.key@example.com" }, "!")).status).toBe(201);
    const longKey = `${"~".repeat(200)}${"A".repeat(55)}`;
    expect((await create({ email: "long.key@example.com" }, longKey)).status).toBe(201);
    expect(replayed(await create({ email: "long.key@example.com" }, longKey))).toBe("true");
  });

  test("20 concurrent identical creates: one row, 20 identical answers, 19 replayed", async () => {
    const body = { email: "crowd@example.com", firstName: "Crowd" };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => create(body, "concurrent-1")),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => replayed(a) === "true")).toHaveLength(19);
    expect(answers.filter((a) => replayed(a) === null)).toHaveLength(1);
    expect(await customersWith("crowd@example.com")).toBe(1);
  });

  test("a 409 is stored and replayed, even after the conflict is gone", async () => {
    const first = await create({ email: "TAKEN@example.com" }, "conflict-1");
    expect(first.status).toBe(409);
    expect(first.json.error.code).toBe("email_taken");
    expect(replayed(first)).toBeNull();
    const again = await create({ email: "TAKEN@example.com" }, "conflict-1");
    expect(again.status).toBe(409);
    expect(again.text).toBe(first.text);
    expect(replayed(again)).toBe("true");
    // The other customer gives the address up; the key still answers what it answered.
    const freed = await request("/api/v1/customers/1", {
      method: "PATCH",
      body: { email: "was.taken@example.com" },
    });
    expect(freed.status).toBe(200);
    const later = await create({ email: "TAKEN@example.com" }, "conflict-1");
    expect(later.status).toBe(409);
    expect(replayed(later)).toBe("true");
    expect(await customersWith("taken@example.com")).toBe(0);
  });

  test("validation failures are 4xx answers too: stored and replayed; a corrected body needs a new key", async () => {
    const invalid = await create({ email: "oops" }, "fix-1");
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.code).toBe("invalid_field");
    expect(replayed(invalid)).toBeNull();
    const again = await create({ email: "oops" }, "fix-1");
    expect(again.text).toBe(invalid.text);
    expect(replayed(again)).toBe("true");
    const corrected = await create({ email: "fixed@example.com" }, "fix-1");
    expect(corrected.status).toBe(400);
    expect(corrected.json.error).toMatchObject({
      code: "invalid_parameter",
      field: "Idempotency-Key",
    });
    expect((await create({ email: "fixed@example.com" }, "fix-2")).status).toBe(201);
  });

  test("without the header every request runs", async () => {
    expect((await create({ email: "plain@example.com" })).status).toBe(201);
    const again = await create({ email: "plain@example.com" });
    expect(again.status).toBe(409);
    expect(replayed(again)).toBeNull();
  });

  test("scope is per API key: the same Idempotency-Key under another key is another request", async () => {
    const mine = await create({ email: "scope.a@example.com" }, "scoped-1");
    const theirs = await create({ email: "scope.b@example.com" }, "scoped-1", { key: SECOND_KEY });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.json.data.id).not.toBe(mine.json.data.id);
    expect(await customersWith("scope.a@example.com")).toBe(1);
    expect(await customersWith("scope.b@example.com")).toBe(1);
    // Each key still replays its own answer.
    expect((await create({ email: "scope.a@example.com" }, "scoped-1")).text).toBe(mine.text);
    expect(
      (await create({ email: "scope.b@example.com" }, "scoped-1", { key: SECOND_KEY })).text,
    ).toBe(theirs.text);
    // The same body under the second key runs (and conflicts) instead of replaying the first key's answer.
    const crossed = await create({ email: "scope.a@example.com" }, "scoped-2", { key: SECOND_KEY });
    expect(crossed.status).toBe(409);
    expect(replayed(crossed)).toBeNull();
  });

  test("scope is per store", async () => {
    const here = await create({ email: "both.stores@example.com" }, "store-scope-1");
    const there = await create({ email: "both.stores@example.com" }, "store-scope-1", {
      host: "shop2.test",
      key: KEYS.other,
    });
    expect(here.status).toBe(201);
    expect(there.status).toBe(201);
    expect(replayed(there)).toBeNull();
    expect(
      await customersWith("both.stores@example.com", { host: "shop2.test", key: KEYS.other }),
    ).toBe(1);
  });

  test("records older than 24 hours are not replayed and are purged", async () => {
    const first = await create({ email: "old.one@example.com" }, "expiring-1");
    expect(first.status).toBe(201);
    expect((await create({ email: "stale@example.com" }, "expiring-2")).status).toBe(201);
    const dayAndASecond = 24 * 3_600_000 + 1000;
    await withStoreDb((db) =>
      db.run(
        "UPDATE idempotency SET created_at = created_at - ? WHERE idem_key IN ('expiring-1', 'expiring-2')",
        [dayAndASecond],
      ),
    );
    // Expired: the same key with another body is a new request, not a mismatch.
    const fresh = await create({ email: "new.one@example.com" }, "expiring-1");
    expect(fresh.status).toBe(201);
    expect(replayed(fresh)).toBeNull();
    expect(fresh.json.data.id).not.toBe(first.json.data.id);
    const rows = await withStoreDb((db) =>
      db.all<{ idem_key: string }>(
        "SELECT idem_key FROM idempotency WHERE idem_key IN ('expiring-1', 'expiring-2')",
      ),
    );
    // expiring-1 holds the new answer; expiring-2 was purged while it was stored.
    expect(rows.map((r) => r.idem_key)).toEqual(["expiring-1"]);
    expect(replayed(await create({ email: "new.one@example.com" }, "expiring-1"))).toBe("true");
  });

  test("the created row and its record are written together", async () => {
    const answer = await create({ email: "together@example.com" }, "together-1");
    const record = await withStoreDb((db) =>
      db.get<{ status: number; body: string; key_id: number }>(
        "SELECT status, body, key_id FROM idempotency WHERE idem_key = 'together-1'",
      ),
    );
    expect(record?.status).toBe(201);
    expect(record?.body).toBe(answer.text);
  });
});
