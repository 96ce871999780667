import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { fingerprint } from "../src/http/idempotency";
import { tempDir, until } from "./helpers";
import { dataDirIn, manage, newHostKey, storeBody } from "./manage-support";
import { type ServerProcess, spawnServer } from "./process";
import { TEST_LIBSQL } from "./sqld";

// Each test starts CLI processes or waits for a reload: on a loaded machine that takes seconds.
setDefaultTimeout(60_000);

let dir: string;
let server: ServerProcess;
let hostKey: string;
let otherHostKey: string;

beforeAll(async () => {
  dir = tempDir("storeapi-manage-idem-");
  hostKey = await newHostKey(dataDirIn(dir));
  otherHostKey = await newHostKey(dataDirIn(dir), "other");
  server = await spawnServer(dataDirIn(dir));
});

afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

const post = (path: string, body: unknown, idem: string, key = hostKey) =>
  manage(server.url, "POST", path, { key, body, headers: { "Idempotency-Key": idem } });

test("creates with Idempotency-Key run once per (host key, key): replayed, different body 400, another host key its own", async () => {
  const first = await post("/stores", storeBody("idem"), "store-1");
  expect(first.status).toBe(201);
  const again = await post("/stores", storeBody("idem"), "store-1");
  expect(again.status).toBe(201);
  expect(again.headers.get("Idempotent-Replayed")).toBe("true");
  expect(again.text).toBe(first.text);
  const different = await post("/stores", storeBody("idem2"), "store-1");
  expect(different.status).toBe(400);
  expect(different.json.error).toMatchObject({
    code: "invalid_parameter",
    field: "Idempotency-Key",
  });
  // Another host key's same Idempotency-Key is another request: here the slug is taken.
  expect((await post("/stores", storeBody("idem"), "store-1", otherHostKey)).json.error.code).toBe(
    "slug_taken",
  );

  const orders = await Promise.all(
    [1, 2, 3].map(() => post("/stores/idem/orders", { number: 7, status: 1, total: 5 }, "order-7")),
  );
  expect(orders.map((o) => o.status)).toEqual([201, 201, 201]);
  expect(orders.filter((o) => o.headers.get("Idempotent-Replayed") === "true")).toHaveLength(2);
  expect(new Set(orders.map((o) => o.text)).size).toBe(1);

  const lead = await post("/stores/idem/leads", { name: "Noa" }, "lead-1");
  expect((await post("/stores/idem/leads", { name: "Noa" }, "lead-1")).text).toBe(lead.text);

  const key = await post(
    "/stores/idem/keys",
    { name: "k", permissions: { orders: "read" } },
    "key-1",
  );
  expect(key.json.data.key).toMatch(/^svc_sk_/);
  const replayedKey = await post(
    "/stores/idem/keys",
    { name: "k", permissions: { orders: "read" } },
    "key-1",
  );
  expect(replayedKey.json.data).toEqual({ ...key.json.data, key: null });
  expect(
    (await manage(server.url, "GET", "/stores/idem/keys", { key: hostKey })).json.data,
  ).toHaveLength(1);

  // A rejected body is kept and replayed like any other 4xx.
  const bad = await post("/stores/idem/leads", { email: "x@example.com" }, "lead-bad");
  expect(bad.status).toBe(400);
  const badAgain = await post("/stores/idem/leads", { email: "x@example.com" }, "lead-bad");
  expect(badAgain.headers.get("Idempotent-Replayed")).toBe("true");
  expect(badAgain.text).toBe(bad.text);
});

test("a host key's Idempotency-Key used in one store is 400 in another store and on a store create", async () => {
  expect((await post("/stores", storeBody("scope-a"), "scope-store-a")).status).toBe(201);
  expect((await post("/stores", storeBody("scope-b"), "scope-store-b")).status).toBe(201);
  const lead = await post("/stores/scope-a/leads", { name: "Gal" }, "scope-lead");
  expect(lead.status).toBe(201);
  const usedElsewhere = (answer: Awaited<ReturnType<typeof post>>) => [
    answer.status,
    answer.json.error?.code,
    answer.json.error?.field,
  ];
  // Recorded beside the answer (on a libSQL server a request later): waited for with a body
  // that creates nothing either way.
  const refused = async () =>
    (await post("/stores/scope-b/leads", {}, "scope-lead")).json.error.field === "Idempotency-Key";
  expect(await until(refused)).toBe(true);
  const elsewhere = await post("/stores/scope-b/leads", { name: "Gal" }, "scope-lead");
  expect(usedElsewhere(elsewhere)).toEqual([400, "invalid_parameter", "Idempotency-Key"]);
  expect(usedElsewhere(await post("/stores", storeBody("scope-c"), "scope-lead"))).toEqual([
    400,
    "invalid_parameter",
    "Idempotency-Key",
  ]);
  // A store create's key, likewise, in a store.
  expect(
    usedElsewhere(await post("/stores/scope-b/leads", { name: "Gal" }, "scope-store-a")),
  ).toEqual([400, "invalid_parameter", "Idempotency-Key"]);
  // Still replayed where it was first used; another host key's is its own.
  const again = await post("/stores/scope-a/leads", { name: "Gal" }, "scope-lead");
  expect([again.text, again.headers.get("Idempotent-Replayed")]).toEqual([lead.text, "true"]);
  expect(
    (await post("/stores/scope-b/leads", { name: "Gal" }, "scope-lead", otherHostKey)).status,
  ).toBe(201);
  const leads = (slug: string) => manage(server.url, "GET", `/stores/${slug}`, { key: hostKey });
  expect((await leads("scope-c")).status).toBe(404); // the refused create made no store

  // A first answer that was a 4xx (kept and replayed) uses the key just the same.
  expect((await post("/stores/scope-a/leads", {}, "scope-refused")).status).toBe(400);
  const refusedThere = async () =>
    (await post("/stores/scope-b/leads", {}, "scope-refused")).json.error.field ===
    "Idempotency-Key";
  expect(await until(refusedThere)).toBe(true);
  expect(
    usedElsewhere(await post("/stores/scope-b/leads", { name: "Gal" }, "scope-refused")),
  ).toEqual([400, "invalid_parameter", "Idempotency-Key"]);
});

// platform.db held by another process (an operator's sqlite3): only the files case has one.
test.skipIf(TEST_LIBSQL)(
  "a create in one store keeps its record in that store's transaction: platform.db locked meanwhile, a retry replays it",
  async () => {
    expect((await post("/stores", storeBody("locked"), "store-locked")).status).toBe(201);
    const operator = new Database(join(dataDirIn(dir), "platform.db"));
    let lead: Awaited<ReturnType<typeof post>>;
    let order: Awaited<ReturnType<typeof post>>;
    try {
      operator.exec("PRAGMA busy_timeout = 5000");
      operator.exec("BEGIN IMMEDIATE");
      // Before, the lead was committed, then its record could not be written: 503, and the
      // retry made a second lead (an order's retry got 409 number_taken, kept for good).
      lead = await post("/stores/locked/leads", { name: "Dana" }, "lead-locked");
      order = await post("/stores/locked/orders", { number: 9, status: 1, total: 5 }, "order-9");
    } finally {
      operator.exec("ROLLBACK");
      operator.close();
    }
    expect([lead.status, order.status]).toEqual([201, 201]);
    const leadAgain = await post("/stores/locked/leads", { name: "Dana" }, "lead-locked");
    const orderAgain = await post(
      "/stores/locked/orders",
      { number: 9, status: 1, total: 5 },
      "order-9",
    );
    expect([leadAgain.text, orderAgain.text]).toEqual([lead.text, order.text]);
    const store = new Database(join(dataDirIn(dir), "stores", "locked.db"), { readonly: true });
    try {
      expect(store.query("SELECT count(*) AS n FROM leads WHERE name = 'Dana'").get()).toEqual({
        n: 1,
      });
    } finally {
      store.close();
    }
  },
);

// What a release before this one kept in platform.db: written here as it wrote it (files only).
test.skipIf(TEST_LIBSQL)(
  "an answer kept in platform.db by the release before is replayed for the same request after an upgrade",
  async () => {
    expect((await post("/stores", storeBody("upgraded"), "store-upgraded")).status).toBe(201);
    const path = "/manage/v1/stores/upgraded/leads";
    const body = { name: "Eli" };
    // The lead the earlier release made, and the answer it kept for it.
    const earlier = (await post("/stores/upgraded/leads", body, "made-before")).text;
    const platform = new Database(join(dataDirIn(dir), "platform.db"));
    try {
      platform.run(
        "INSERT INTO idempotency (key_id, idem_key, fingerprint, status, body, created_at) VALUES (1, 'before-upgrade', ?, 201, ?, ?)",
        [fingerprint("POST", path, body), earlier, Date.now()],
      );
    } finally {
      platform.close();
    }
    const retried = await post("/stores/upgraded/leads", body, "before-upgrade");
    expect([retried.status, retried.text, retried.headers.get("Idempotent-Replayed")]).toEqual([
      201,
      earlier,
      "true",
    ]);
    const store = new Database(join(dataDirIn(dir), "stores", "upgraded.db"), { readonly: true });
    try {
      expect(store.query("SELECT count(*) AS n FROM leads").get()).toEqual({ n: 1 });
    } finally {
      store.close();
    }
  },
);

test("a store create killed right after it was registered is replayed by its retry, not 409 slug_taken", async () => {
  const crashDir = tempDir("storeapi-manage-idem-crash-");
  try {
    const key = await newHostKey(dataDirIn(crashDir));
    const crashing = await spawnServer(dataDirIn(crashDir), [], {
      STOREAPI_TEST_LOAD_CRASH: "store-registered",
    });
    const send = (url: string) =>
      manage(url, "POST", "/stores", {
        key,
        body: storeBody("crashed"),
        headers: { "Idempotency-Key": "crash-1" },
      });
    await expect(send(crashing.url)).rejects.toThrow();
    expect(await crashing.proc.exited).not.toBe(0);
    const restarted = await spawnServer(dataDirIn(crashDir));
    try {
      const retry = await send(restarted.url);
      expect([retry.status, retry.headers.get("Idempotent-Replayed")]).toEqual([201, "true"]);
      const shown = await manage(restarted.url, "GET", "/stores/crashed", { key });
      expect(retry.text).toBe(shown.text);
    } finally {
      await restarted.signal("SIGTERM");
    }
  } finally {
    rmSync(crashDir, { recursive: true, force: true });
  }
});
