import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { documentedRequests } from "./contract";
import {
  type ApiAnswer,
  KEYS,
  otherStore,
  startTestServer,
  type TestServer,
  testStore,
} from "./helpers";
import { testLocation } from "./sqld";

/** Customers (api-contract.md §7): shapes, list order and filters, create, update and the approval states. */

const ADA = {
  id: 1,
  email: "ada@example.com",
  firstName: "Ada",
  lastName: "Lovelace",
  phone: "+972-50-0000001",
  newsletter: true,
  status: "active",
  notes: "VIP",
  registeredAt: "2025-01-10T10:00:00+02:00",
  lastVisitAt: "2025-03-01T12:30:00+02:00",
  createdAt: "2025-01-10T10:00:00+02:00",
};

const listed = [
  ADA,
  { id: 2, email: "Bob@Example.com", firstName: "Bob", status: "pending", createdAt: "2025-02-01" },
  { id: 3, email: "carol@example.com", status: "locked", createdAt: "2025-03-01T09:00:00+02:00" },
  { id: 4, email: "dan@example.com", status: "pending", createdAt: "2025-03-01T09:00:00+02:00" },
  { id: 5, email: "eve@example.com", createdAt: "2025-04-01T08:00:00+03:00", registeredAt: null },
];

/** Customers the update tests change, one per test (ids 100+, created long before the listed ones). */
const editable = [
  { id: 100, email: "pending.one@example.com", firstName: "Pia", status: "pending" },
  { id: 101, email: "locked.one@example.com", status: "locked" },
  { id: 102, email: "active.one@example.com", status: "active" },
  { id: 103, email: "pending.two@example.com", status: "pending" },
  { id: 104, email: "locked.two@example.com", status: "locked" },
  { id: 105, email: "active.two@example.com", status: "active" },
  {
    id: 106,
    email: "details@example.com",
    firstName: "Dee",
    lastName: "Tails",
    phone: "123",
    newsletter: true,
    notes: "n",
  },
  { id: 107, email: "mover@example.com" },
  { id: 108, email: "pending.three@example.com", firstName: "Pat", status: "pending" },
].map((c) => ({ ...c, createdAt: "2020-01-01" }));

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    stores: [
      testStore({ customers: [...listed, ...editable] }),
      otherStore({ customers: [{ id: 900, email: "stranger@example.com" }] }),
      testStore({
        slug: "manual",
        domain: "manual.test",
        settings: { manualCustomerApproval: true, notifyStatusChange: true, registration: true },
      }),
      testStore({
        slug: "closed",
        domain: "closed.test",
        settings: { manualCustomerApproval: false, notifyStatusChange: true, registration: false },
      }),
    ],
  });
});
afterAll(() => server.stop());

/** Every answer is also checked against the OpenAPI document. */
const request: TestServer["request"] = (path, options) => documentedRequests(server)(path, options);

const get = (path: string, options: { host?: string; key?: string } = {}) =>
  request(`/api/v1${path}`, options);
const post = (body: unknown, options: { host?: string; key?: string } = {}) =>
  request("/api/v1/customers", { method: "POST", body, ...options });
const patch = (id: number | string, body: unknown, options: { host?: string } = {}) =>
  request(`/api/v1/customers/${id}`, { method: "PATCH", body, ...options });

const ids = (answer: ApiAnswer) => answer.json.data.map((c: { id: number }) => c.id);

function expectError(answer: ApiAnswer, status: number, code: string, field?: string) {
  expect(answer.status).toBe(status);
  expect(answer.json.ok).toBe(false);
  expect(answer.json.error.code).toBe(code);
  if (field !== undefined) expect(answer.json.error.field).toBe(field);
}

/** Emails in the store's outbox to one address. */
async function mailTo(recipient: string, slug = "shop1") {
  const db = await (await testLocation(server.dataDir)).openStore(slug);
  try {
    return await db.all<{ kind: string; subject: string; text: string }>(
      "SELECT kind, subject, text FROM outbox WHERE recipient = ? ORDER BY id",
      [recipient],
    );
  } finally {
    await db.close();
  }
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[23]:00$/;

describe("GET /customers", () => {
  test("lists newest first by createdAt then id, every field present", async () => {
    const answer = await get("/customers?created_since=2025-01-01");
    expect(answer.status).toBe(200);
    expect(ids(answer)).toEqual([5, 4, 3, 2, 1]);
    expect(answer.json.hasMore).toBe(false);
    expect(answer.json.nextCursor).toBeNull();
    expect(answer.json.data[4]).toEqual(ADA);
    expect(answer.json.data[0]).toEqual({
      id: 5,
      email: "eve@example.com",
      firstName: "",
      lastName: "",
      phone: null,
      newsletter: false,
      status: "active",
      notes: null,
      registeredAt: null,
      lastVisitAt: null,
      createdAt: "2025-04-01T08:00:00+03:00",
    });
    // A fixture customer without registeredAt registered when its record was created.
    expect(answer.json.data[3].registeredAt).toBe("2025-02-01T00:00:00+02:00");
  });

  test("created_since is inclusive", async () => {
    expect(ids(await get("/customers?created_since=2025-03-01T09:00:00%2B02:00"))).toEqual([
      5, 4, 3,
    ]);
    expect(ids(await get("/customers?created_since=2025-03-01T07:00:01Z"))).toEqual([5]);
  });

  test("status and email filters, alone and together", async () => {
    expect(ids(await get("/customers?status=pending&created_since=2025-01-01"))).toEqual([4, 2]);
    expect(ids(await get("/customers?status=locked&created_since=2025-01-01"))).toEqual([3]);
    expect(ids(await get("/customers?email=bob@EXAMPLE.com"))).toEqual([2]);
    expect(ids(await get("/customers?email=BOB@example.COM&status=pending"))).toEqual([2]);
    expect(ids(await get("/customers?email=bob@example.com&status=active"))).toEqual([]);
    expect(ids(await get("/customers?email=bob"))).toEqual([]);
    // Only A–Z fold: a Kelvin sign (U+212A, lower case "k" to toLowerCase) is no "k".
    expect(ids(await get("/customers?email=LOCKED.one@example.com"))).toEqual([101]);
    expect(ids(await get("/customers?email=loc%E2%84%AAed.one@example.com"))).toEqual([]);
  });

  test("bad parameters are 400 invalid_parameter naming the parameter", async () => {
    expectError(await get("/customers?status=banned"), 400, "invalid_parameter", "status");
    expectError(await get("/customers?email="), 400, "invalid_parameter", "email");
    expectError(
      await get("/customers?created_since=yesterday"),
      400,
      "invalid_parameter",
      "created_since",
    );
    expectError(await get("/customers?limit=0"), 400, "invalid_parameter", "limit");
    expectError(await get("/customers?sort=email"), 400, "invalid_parameter", "sort");
  });

  test("pages with cursors without skipping or repeating, bound to their filters", async () => {
    const first = await get("/customers?limit=2&created_since=2025-01-01");
    expect(ids(first)).toEqual([5, 4]);
    expect(first.json.hasMore).toBe(true);
    const cursor = encodeURIComponent(first.json.nextCursor);
    const second = await get(`/customers?limit=2&created_since=2025-01-01&cursor=${cursor}`);
    expect(ids(second)).toEqual([3, 2]);
    const third = await get(
      `/customers?limit=2&created_since=2025-01-01&cursor=${encodeURIComponent(second.json.nextCursor)}`,
    );
    expect(ids(third)).toEqual([1]);
    expect(third.json.hasMore).toBe(false);
    expect(third.json.nextCursor).toBeNull();
    expectError(
      await get(`/customers?limit=2&cursor=${cursor}`),
      400,
      "invalid_parameter",
      "cursor",
    );
    expectError(
      await get(`/customers?limit=2&created_since=2025-01-01&status=active&cursor=${cursor}`),
      400,
      "invalid_parameter",
      "cursor",
    );
  });

  test("a filtered walk pages inside its filter", async () => {
    const first = await get("/customers?status=pending&limit=1&created_since=2025-01-01");
    expect(ids(first)).toEqual([4]);
    const next = await get(
      `/customers?status=pending&limit=1&created_since=2025-01-01&cursor=${encodeURIComponent(first.json.nextCursor)}`,
    );
    expect(ids(next)).toEqual([2]);
    expect(next.json.hasMore).toBe(false);
  });

  test("needs customers:read; another store's customers are not listed", async () => {
    expectError(await get("/customers", { key: KEYS.none }), 403, "insufficient_scope");
    expect((await get("/customers", { key: KEYS.read })).status).toBe(200);
    expect(ids(await get("/customers", { host: "shop2.test", key: KEYS.other }))).toEqual([900]);
  });
});

describe("GET /customers/{id}", () => {
  test("answers the customer", async () => {
    const answer = await get("/customers/1");
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ ok: true, data: ADA });
  });

  test("unknown, foreign and malformed ids", async () => {
    const missing = await get("/customers/999");
    expectError(missing, 404, "not_found");
    expect(missing.json.error.message).toBe("Customer 999 was not found."); // worded like every resource's 404
    expectError(await get("/customers/900"), 404, "not_found");
    expectError(
      await get("/customers/1", { host: "shop2.test", key: KEYS.other }),
      404,
      "not_found",
    );
    expectError(await get("/customers/abc"), 400, "invalid_parameter", "id");
    expectError(await get("/customers/0"), 400, "invalid_parameter", "id");
  });
});

describe("POST /customers", () => {
  test("creates an active customer with the fields as sent (201)", async () => {
    const answer = await post({
      email: "Zoe@Example.com",
      firstName: " Zoe ",
      lastName: "Zed",
      phone: "050-1234567",
      newsletter: true,
      notes: "from the API",
    });
    expect(answer.status).toBe(201);
    const data = answer.json.data;
    expect(data).toEqual({
      id: data.id,
      email: "Zoe@Example.com",
      firstName: " Zoe ",
      lastName: "Zed",
      phone: "050-1234567",
      newsletter: true,
      status: "active",
      notes: "from the API",
      registeredAt: data.createdAt,
      lastVisitAt: null,
      createdAt: data.createdAt,
    });
    expect(data.id).toBeGreaterThan(108);
    expect(data.createdAt).toMatch(DATE_TIME);
    expect(answer.headers.get("idempotent-replayed")).toBeNull();
    expect((await get(`/customers/${data.id}`)).json.data).toEqual(data);
    expect(ids(await get("/customers?limit=1"))).toEqual([data.id]);
  });

  test("only email is required; the rest default", async () => {
    const answer = await post({ email: "minimal@example.com" });
    expect(answer.status).toBe(201);
    expect(answer.json.data).toMatchObject({
      email: "minimal@example.com",
      firstName: "",
      lastName: "",
      phone: null,
      newsletter: false,
      status: "active",
      notes: null,
      lastVisitAt: null,
    });
  });

  test("addresses people have: an apostrophe, a +tag, an IDN domain or top-level domain", async () => {
    for (const email of [
      "o'brien@example.com",
      "first+tag@example.co.il",
      "user@xn--80ak6aa92e.com",
      "user@example.xn--4dbrk0ce",
      `${"l".repeat(64)}@example.com`,
    ]) {
      const answer = await post({ email });
      expect([email, answer.status, answer.json.data?.email]).toEqual([email, 201, email]);
    }
    // What cannot go into a mail header as it is, or names no mail domain.
    for (const email of ['"q"@example.com', "a b@example.com", "a@x", "a@1.2.3.4", "a..b@x.com"])
      expectError(await post({ email }), 400, "invalid_field", "email");
    const longLocal = await post({ email: `${"l".repeat(65)}@example.com` });
    expect([longLocal.status, longLocal.json.error.message]).toEqual([
      400,
      'Field "email" must have at most 64 characters before the @.',
    ]);
  });

  test("lengths count characters, not bytes", async () => {
    const answer = await post({
      email: "long.names@example.com",
      firstName: "🙂".repeat(100),
      phone: "9".repeat(32),
      notes: "n".repeat(5000),
    });
    expect(answer.status).toBe(201);
    expect(answer.json.data.firstName).toBe("🙂".repeat(100));
  });

  test("invalid bodies are 400 invalid_field naming the field", async () => {
    const cases: Array<[unknown, string]> = [
      [{}, "email"],
      [{ firstName: "No Email" }, "email"],
      [{ email: "not-an-email" }, "email"],
      [{ email: `${"a".repeat(243)}@example.com` }, "email"],
      [{ email: 42 }, "email"],
      [{ email: "x1@example.com", active: true }, "active"],
      [{ email: "x2@example.com", status: "active" }, "status"],
      [{ email: "x3@example.com", firstName: "a".repeat(101) }, "firstName"],
      [{ email: "x4@example.com", lastName: null }, "lastName"],
      [{ email: "x5@example.com", phone: "1".repeat(33) }, "phone"],
      [{ email: "x6@example.com", notes: "n".repeat(5001) }, "notes"],
      [{ email: "x7@example.com", newsletter: "yes" }, "newsletter"],
    ];
    for (const [body, field] of cases) expectError(await post(body), 400, "invalid_field", field);
    expectError(
      await request("/api/v1/customers", {
        method: "POST",
        raw: "[]",
        headers: { "Content-Type": "application/json" },
      }),
      400,
      "invalid_field",
    );
    expect(ids(await get("/customers?email=x1@example.com"))).toEqual([]);
  });

  test("an email in use, in any case, is 409 email_taken", async () => {
    expectError(await post({ email: "ADA@example.COM" }), 409, "email_taken", "email");
    expectError(await post({ email: "bob@example.com" }), 409, "email_taken", "email");
    // Another store's customer does not count.
    expect(
      (await post({ email: "ada@example.com" }, { host: "shop2.test", key: KEYS.other })).status,
    ).toBe(201);
  });

  test("starts pending while the store approves customers manually", async () => {
    const answer = await post({ email: "waiting@example.com" }, { host: "manual.test" });
    expect(answer.status).toBe(201);
    expect(answer.json.data.status).toBe("pending");
    expect(answer.json.data.registeredAt).toMatch(DATE_TIME);
  });

  test("registration off is 409 registration_disabled, after validation", async () => {
    expectError(
      await post({ email: "nobody@example.com" }, { host: "closed.test" }),
      409,
      "registration_disabled",
    );
    expectError(
      await post({ email: "bad" }, { host: "closed.test" }),
      400,
      "invalid_field",
      "email",
    );
    expect(ids(await get("/customers", { host: "closed.test" }))).toEqual([]);
  });

  test("needs customers:write", async () => {
    expectError(
      await post({ email: "reader@example.com" }, { key: KEYS.read }),
      403,
      "insufficient_scope",
    );
  });
});

describe("PATCH /customers/{id}", () => {
  test("changes only the fields sent; nullable ones clear with null", async () => {
    const answer = await patch(106, {
      firstName: "Dina ",
      phone: null,
      notes: null,
      newsletter: false,
    });
    expect(answer.status).toBe(200);
    expect(answer.json.data).toEqual({
      id: 106,
      email: "details@example.com",
      firstName: "Dina ",
      lastName: "Tails",
      phone: null,
      newsletter: false,
      status: "active",
      notes: null,
      registeredAt: "2020-01-01T00:00:00+02:00",
      lastVisitAt: null,
      createdAt: "2020-01-01T00:00:00+02:00",
    });
    expect((await get("/customers/106")).json.data).toEqual(answer.json.data);
    const same = await patch(106, { lastName: "Tails" });
    expect(same.status).toBe(200);
    expect(same.json.data).toEqual(answer.json.data);
  });

  test("email: another customer's (any case) is 409; its own in another case is a change", async () => {
    expectError(await patch(107, { email: "Carol@Example.com" }), 409, "email_taken", "email");
    const answer = await patch(107, { email: "Mover@Example.com" });
    expect(answer.status).toBe(200);
    expect(answer.json.data.email).toBe("Mover@Example.com");
    expect(ids(await get("/customers?email=mover@example.com"))).toEqual([107]);
    expect((await patch(107, { email: "moved@example.com" })).json.data.email).toBe(
      "moved@example.com",
    );
    expect(ids(await get("/customers?email=mover@example.com"))).toEqual([]);
    expectError(await patch(107, { email: "not an email" }), 400, "invalid_field", "email");
  });

  test("empty body is nothing_to_update (before not_found); bad fields are invalid_field", async () => {
    expectError(await patch(102, {}), 400, "nothing_to_update");
    expectError(await patch(999, {}), 400, "nothing_to_update");
    // Fields that are not the customer's to change (notifyCustomer is the order's), each named.
    for (const field of ["status", "notifyCustomer", "id", "createdAt", "registeredAt"]) {
      expectError(await patch(102, { [field]: true }), 400, "invalid_field", field);
    }
    expectError(await patch(102, { status: "locked" }), 400, "invalid_field", "status");
    expectError(await patch(102, { active: "yes" }), 400, "invalid_field", "active");
    expectError(await patch(102, { email: null }), 400, "invalid_field", "email");
    expectError(
      await patch(102, { firstName: "x".repeat(101) }),
      400,
      "invalid_field",
      "firstName",
    );
  });

  test("unknown, foreign and malformed ids", async () => {
    expectError(await patch(999, { firstName: "X" }), 404, "not_found");
    expectError(await patch(900, { firstName: "X" }), 404, "not_found");
    expectError(await patch("1.5", { firstName: "X" }), 400, "invalid_parameter", "id");
    expectError(
      await request("/api/v1/customers/1", {
        method: "PATCH",
        body: { firstName: "X" },
        key: KEYS.read,
      }),
      403,
      "insufficient_scope",
    );
  });
});

describe("status transitions", () => {
  test("pending + active:true → active, and the customer is emailed once that it can log in", async () => {
    const answer = await patch(100, { active: true });
    expect(answer.status).toBe(200);
    expect(answer.json.data.status).toBe("active");
    expect((await get("/customers/100")).json.data.status).toBe("active");
    const mail = await mailTo("pending.one@example.com");
    expect(mail.map((m) => [m.kind, m.subject])).toEqual([
      ["customer_approved", "Your Test Shop account is approved"],
    ]);
    expect(mail[0].text).toStartWith(
      "Hello Pia,\n\nYour account at Test Shop has been approved. You can now log in.\n",
    );
    // Again: already active, nothing changes and nothing is sent.
    expect((await patch(100, { active: true })).json.data.status).toBe("active");
    expect(await mailTo("pending.one@example.com")).toHaveLength(1);
  });

  test("approval with a new email in the same request mails the new address", async () => {
    const answer = await patch(108, { active: true, email: "pat.new@example.com" });
    expect(answer.json.data).toMatchObject({ status: "active", email: "pat.new@example.com" });
    expect(await mailTo("pending.three@example.com")).toEqual([]);
    expect((await mailTo("pat.new@example.com")).map((m) => m.kind)).toEqual(["customer_approved"]);
  });

  test("locked + active:true → active (unlocked), no email", async () => {
    const answer = await patch(101, { active: true });
    expect(answer.status).toBe(200);
    expect(answer.json.data.status).toBe("active");
    expect(await mailTo("locked.one@example.com")).toEqual([]);
  });

  test("active:false locks from active and from pending, no email", async () => {
    expect((await patch(102, { active: false })).json.data.status).toBe("locked");
    expect((await patch(103, { active: false })).json.data.status).toBe("locked");
    expect((await get("/customers/103")).json.data.status).toBe("locked");
    expect(await mailTo("active.one@example.com")).toEqual([]);
    expect(await mailTo("pending.two@example.com")).toEqual([]);
    // A locked customer approved later is unlocked, not "approved": still no email.
    expect((await patch(103, { active: true })).json.data.status).toBe("active");
    expect(await mailTo("pending.two@example.com")).toEqual([]);
  });

  test("active equal to the present state is a 200 that changes nothing", async () => {
    const locked = await patch(104, { active: false });
    expect(locked.status).toBe(200);
    expect(locked.json.data.status).toBe("locked");
    const active = await patch(105, { active: true });
    expect(active.status).toBe(200);
    expect(active.json.data.status).toBe("active");
    expect(await mailTo("locked.two@example.com")).toEqual([]);
    expect(await mailTo("active.two@example.com")).toEqual([]);
  });

  test("a pending customer created on a manual-approval store is approved with an email", async () => {
    const created = await post(
      { email: "newbie@example.com", firstName: "New" },
      { host: "manual.test" },
    );
    expect(created.json.data.status).toBe("pending");
    const approved = await patch(created.json.data.id, { active: true }, { host: "manual.test" });
    expect(approved.json.data.status).toBe("active");
    expect((await mailTo("newbie@example.com", "manual")).map((m) => m.subject)).toEqual([
      "Your Test Shop account is approved",
    ]);
  });
});
