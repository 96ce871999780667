import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { apiRoutes } from "../src/routes";
import { documentedRequests } from "./contract";
import { startInProcess } from "./front-door-app";
import {
  KEYS,
  otherStore,
  type RequestOptions,
  STATUSES,
  startTestServer,
  type TestServer,
  testStore,
} from "./helpers";
import { testLocation } from "./sqld";

/** GET /orders/{id} and PATCH /orders/{id} (api-contract.md §7 Order). */

const richOrder = {
  id: 10,
  number: 1010,
  status: 3,
  paid: true,
  total: 1234.5,
  vat: 179.37,
  payType: "credit_card",
  payments: 3,
  paypalFee: null,
  trackingNumber: "RR123456789IL",
  adminNotes: "VIP",
  customerNotes: "Leave at the door",
  newsletter: true,
  customer: {
    id: 42,
    name: "Dana Levi",
    email: "dana@example.test",
    phone: "050-1234567",
    address: "1 Herzl St, Tel Aviv",
  },
  delivery: { name: "Courier", price: 25 },
  coupon: { code: "SPRING", description: "Spring sale", amount: -50.1 },
  fields: [{ name: "Gift wrap", value: "yes" }],
  invoice: { number: 5001, url: "https://invoices.example.test/5001.pdf" },
  items: [
    {
      name: "Shirt",
      sku: "SH-1",
      productId: 7,
      quantity: 2,
      price: 100,
      optionsPrice: 10.25,
      unitPrice: 110.25,
      total: 220.5,
      unitName: null,
      vatFree: false,
      options: [
        { name: "Size XL", price: 10 },
        { name: "Print", price: 0.25 },
      ],
    },
    { name: "Honey", productId: 8, quantity: 1, price: 0.07, unitName: "jar", vatFree: true },
  ],
  promotions: [
    { name: "Second item half price", amount: -55.13, productId: 7 },
    { name: "Free delivery", amount: -25 },
  ],
  createdAt: "2026-07-01T09:00:00Z",
  updatedAt: "2026-07-02T10:30:00+03:00",
};

/** A plain order; `email` "" means the order has no email. */
const plainOrder = (id: number, status: number, email = `buyer${id}@example.test`) => ({
  id,
  number: 2000 + id,
  status,
  total: 10,
  customer: { id: null, name: `Buyer ${id}`, email, phone: "", address: "" },
  createdAt: "2026-01-15",
});

const orders = [
  richOrder,
  plainOrder(1, 1),
  { ...plainOrder(2, 1, ""), createdAt: "2026-01-15T08:00:00+02:00" },
  ...Array.from({ length: 20 }, (_, i) => plainOrder(20 + i, 1)),
];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    stores: [
      // Statuses deliberately not in id order: `validIds` must come back sorted.
      testStore({ orders, orderStatuses: [...STATUSES].reverse() }),
      otherStore({ orders: [plainOrder(1, 1)] }),
      testStore({
        slug: "quiet",
        domain: "quiet.test",
        ownerEmail: "o@quiet.test",
        orders: [plainOrder(1, 1)],
        settings: { notifyStatusChange: false },
      }),
    ],
  });
});
afterAll(() => server.stop());

/** Every answer is also checked against the OpenAPI document. */
const request = (path: string, options?: RequestOptions) =>
  documentedRequests(server)(path, options);

const patch = (id: number, body: unknown, host = "shop1.test") =>
  request(`/api/v1/orders/${id}`, { method: "PATCH", body, host });

async function outbox(
  slug = "shop1",
): Promise<Array<{ kind: string; recipient: string; subject: string; text: string }>> {
  const db = await (await testLocation(server.dataDir)).openStore(slug);
  try {
    return await db.all(
      "SELECT kind, recipient, subject, text FROM outbox WHERE kind = 'order_status' ORDER BY id",
    );
  } finally {
    await db.close();
  }
}

const expectedRich = {
  id: 10,
  number: 1010,
  status: { id: 3, name: "Shipped" },
  paid: true,
  total: 1234.5,
  vat: 179.37,
  payType: "credit_card",
  payments: 3,
  paypalFee: null,
  trackingNumber: "RR123456789IL",
  adminNotes: "VIP",
  customerNotes: "Leave at the door",
  newsletter: true,
  createdAt: "2026-07-01T12:00:00+03:00",
  updatedAt: "2026-07-02T10:30:00+03:00",
  customer: {
    id: 42,
    name: "Dana Levi",
    email: "dana@example.test",
    phone: "050-1234567",
    address: "1 Herzl St, Tel Aviv",
  },
  delivery: { name: "Courier", price: 25 },
  coupon: { code: "SPRING", description: "Spring sale", amount: -50.1 },
  fields: [{ name: "Gift wrap", value: "yes" }],
  invoice: { number: 5001, url: "https://invoices.example.test/5001.pdf" },
  items: [
    {
      name: "Shirt",
      sku: "SH-1",
      productId: 7,
      quantity: 2,
      price: 100,
      optionsPrice: 10.25,
      unitPrice: 110.25,
      total: 220.5,
      unitName: null,
      vatFree: false,
      options: [
        { name: "Size XL", price: 10 },
        { name: "Print", price: 0.25 },
      ],
    },
    {
      name: "Honey",
      sku: "",
      productId: 8,
      quantity: 1,
      price: 0.07,
      optionsPrice: 0,
      unitPrice: 0.07,
      total: 0.07,
      unitName: "jar",
      vatFree: true,
      options: [],
    },
  ],
  promotions: [
    { name: "Second item half price", amount: -55.13, productId: 7 },
    { name: "Free delivery", amount: -25, productId: null },
  ],
};

describe("GET /orders/{id}", () => {
  test("answers the full Order with exact values, money as 2-decimal numbers, Israel times", async () => {
    const answer = await request("/api/v1/orders/10", { key: KEYS.read });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ ok: true, data: expectedRich });
    expect(Object.keys(answer.json.data)).toEqual(Object.keys(expectedRich));
  });

  test("a minimal order has every field, the nullable ones null", async () => {
    const answer = await request("/api/v1/orders/2");
    expect(answer.json.data).toEqual({
      id: 2,
      number: 2002,
      status: { id: 1, name: "New" },
      paid: false,
      total: 10,
      vat: null,
      payType: "other",
      payments: null,
      paypalFee: null,
      trackingNumber: null,
      adminNotes: null,
      customerNotes: "",
      newsletter: false,
      createdAt: "2026-01-15T08:00:00+02:00",
      updatedAt: null,
      customer: { id: null, name: "Buyer 2", email: "", phone: "", address: "" },
      delivery: { name: "", price: 0 },
      coupon: null,
      fields: [],
      invoice: null,
      items: [],
      promotions: [],
    });
  });

  test("404 for an id not in this store, 400 for an id that is not one", async () => {
    const missing = await request("/api/v1/orders/999");
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe("not_found");
    expect(
      (await request("/api/v1/orders/10", { host: "shop2.test", key: KEYS.other })).status,
    ).toBe(404);
    for (const bad of ["0", "-1", "1.5", "abc", "01"]) {
      const answer = await request(`/api/v1/orders/${bad}`);
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe("invalid_parameter");
    }
  });

  test("unknown query parameters are 400", async () => {
    const answer = await request("/api/v1/orders/10?expand=items");
    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({ code: "invalid_parameter", field: "expand" });
  });
});

describe("PATCH /orders/{id}", () => {
  test("changes only the sent fields and answers the Order with customerNotified", async () => {
    const answer = await patch(10, { paid: false, adminNotes: null });
    expect(answer.status).toBe(200);
    const { updatedAt, ...rest } = answer.json.data;
    const { updatedAt: _before, ...expected } = expectedRich;
    expect(rest).toEqual({ ...expected, paid: false, adminNotes: null, customerNotified: false });
    expect(updatedAt).not.toBe(expectedRich.updatedAt);
    const again = await request("/api/v1/orders/10");
    expect(again.json.data.paid).toBe(false);
    expect(again.json.data.adminNotes).toBe(null);
    expect(again.json.data.trackingNumber).toBe("RR123456789IL");
    expect("customerNotified" in again.json.data).toBe(false);
  });

  test("trackingNumber null clears it; a value is stored as sent", async () => {
    expect((await patch(20, { trackingNumber: " AB 1 " })).json.data.trackingNumber).toBe(" AB 1 ");
    expect((await patch(20, { trackingNumber: null })).json.data.trackingNumber).toBe(null);
  });

  test("updatedAt moves on a real change only", async () => {
    // In process, with a clock the test moves: date-times have whole seconds.
    const app = await startInProcess(
      { stores: [testStore({ orders: [plainOrder(21, 1)] })], routes: apiRoutes },
      KEYS.all,
    );
    try {
      const send = (body: unknown) => app.request("/api/v1/orders/21", { method: "PATCH", body });
      const first = await send({ trackingNumber: "T-1", paid: true, adminNotes: "n" });
      const changedAt = first.json.data.updatedAt;
      expect(changedAt).toBe("2030-01-01T14:00:30+02:00");
      app.clock.now += 1_000;
      const same = await send({ trackingNumber: "T-1", paid: true, adminNotes: "n", status: 1 });
      expect(same.status).toBe(200);
      expect(same.json.data.updatedAt).toBe(changedAt);
      expect(same.json.data.customerNotified).toBe(false);
      const changed = await send({ paid: false });
      expect(changed.json.data.updatedAt).toBe("2030-01-01T14:00:31+02:00");
    } finally {
      await app.stop();
    }
  });

  test("a status equal to the present one is accepted and is not a change: no email", async () => {
    const answer = await patch(22, { status: 1, notifyCustomer: true });
    expect(answer.status).toBe(200);
    expect(answer.json.data.customerNotified).toBe(false);
    expect(answer.json.data.updatedAt).toBe(null);
  });

  test("{} and only notifyCustomer are nothing_to_update", async () => {
    for (const body of [{}, { notifyCustomer: true }, { notifyCustomer: false }]) {
      const answer = await patch(22, body);
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe("nothing_to_update");
    }
  });

  test("unknown status: 400 invalid_field with sorted validIds, listed in the message", async () => {
    for (const status of [4, 0, -3]) {
      const answer = await patch(22, { status });
      expect(answer.status).toBe(400);
      expect(answer.json.error).toEqual({
        code: "invalid_field",
        field: "status",
        validIds: [1, 2, 3, 7],
        message: 'Field "status" must be one of this store\'s status ids: 1, 2, 3, 7.',
      });
    }
  });

  test("validation answers before the 404 (contract check order)", async () => {
    expect((await patch(999, { status: 4 })).json.error.code).toBe("invalid_field");
    expect((await patch(999, {})).json.error.code).toBe("nothing_to_update");
    expect((await patch(999, { status: 3 })).status).toBe(404);
    expect((await patch(1, { status: 3 }, "shop2.test")).status).toBe(401); // shop1's key on shop2
  });

  test("wrong fields are invalid_field naming the field", async () => {
    const cases: Array<[unknown, string]> = [
      [{ status: "3" }, "status"],
      [{ status: 3.5 }, "status"],
      [{ status: null }, "status"],
      [{ status: true }, "status"],
      [{ paid: "yes" }, "paid"],
      [{ trackingNumber: "x".repeat(101) }, "trackingNumber"],
      [{ trackingNumber: 5 }, "trackingNumber"],
      [{ adminNotes: "x".repeat(5001) }, "adminNotes"],
      [{ notifyCustomer: "true", paid: true }, "notifyCustomer"],
      [{ paid: true, customerNotified: true }, "customerNotified"],
      [{ total: 5 }, "total"],
    ];
    for (const [body, field] of cases) {
      const answer = await patch(23, body);
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({ code: "invalid_field", field });
    }
    expect(
      (await patch(23, { trackingNumber: "x".repeat(100), adminNotes: "😀".repeat(5000) })).status,
    ).toBe(200);
  });

  test("a read key cannot update", async () => {
    const answer = await request("/api/v1/orders/23", {
      method: "PATCH",
      body: { paid: true },
      key: KEYS.read,
    });
    expect(answer.status).toBe(403);
    expect(answer.json.error.code).toBe("insufficient_scope");
  });
});

describe("status email", () => {
  test("queued when all four conditions hold, with the status name and tracking number", async () => {
    const before = (await outbox()).length;
    const answer = await patch(24, { status: 3, trackingNumber: "RR99IL", notifyCustomer: true });
    expect(answer.status).toBe(200);
    expect(answer.json.data.status).toEqual({ id: 3, name: "Shipped" });
    expect(answer.json.data.customerNotified).toBe(true);
    const mails = (await outbox()).slice(before);
    expect(mails.length).toBe(1);
    expect(mails[0].recipient).toBe("buyer24@example.test");
    expect(mails[0].subject).toBe("Order #2024: Shipped");
    expect(mails[0].text).toContain("The status of your order #2024 at Test Shop is now: Shipped.");
    expect(mails[0].text).toContain("Tracking number: RR99IL");
  });

  test("not without notifyCustomer", async () => {
    const before = (await outbox()).length;
    const answer = await patch(25, { status: 3 });
    expect(answer.json.data.customerNotified).toBe(false);
    expect(answer.json.data.status.id).toBe(3);
    expect((await outbox()).length).toBe(before);
  });

  test("not when the status did not really change", async () => {
    await patch(26, { status: 7 });
    const before = (await outbox()).length;
    const answer = await patch(26, { status: 7, trackingNumber: "NEW", notifyCustomer: true });
    expect(answer.json.data.customerNotified).toBe(false);
    expect(answer.json.data.trackingNumber).toBe("NEW");
    expect((await outbox()).length).toBe(before);
  });

  test("never for statuses 1 and 2", async () => {
    await patch(27, { status: 3 });
    const before = (await outbox()).length;
    for (const status of [2, 1, 2]) {
      const answer = await patch(27, { status, notifyCustomer: true });
      expect(answer.json.data.status.id).toBe(status);
      expect(answer.json.data.customerNotified).toBe(false);
    }
    expect((await outbox()).length).toBe(before);
  });

  test("not when the order has no email", async () => {
    const before = (await outbox()).length;
    const answer = await patch(2, { status: 3, notifyCustomer: true });
    expect(answer.json.data.status.id).toBe(3);
    expect(answer.json.data.customerNotified).toBe(false);
    expect((await outbox()).length).toBe(before);
  });

  test("PATCHes of one order at once: each answers the order as its own write left it, and the emails are the status changes answered", async () => {
    const before = (await outbox()).length;
    // Each writes a field of its own, so an answer built from a stale read would show another's old value.
    const bodies = Array.from({ length: 24 }, (_, i) => ({
      status: i % 2 === 0 ? 3 : 7,
      notifyCustomer: true,
      ...(i % 3 === 0 ? { trackingNumber: `T${i}` } : { adminNotes: `N${i}` }),
    }));
    const answers = await Promise.all(bodies.map((body) => patch(30, body)));
    expect(answers.map((a) => a.status)).toEqual(bodies.map(() => 200));
    const states = answers.map(({ json }) => json.data);
    const final = (await request("/api/v1/orders/30")).json.data;
    const last = states.filter((state) => state.updatedAt === final.updatedAt);
    expect(last.length).toBeGreaterThanOrEqual(1);
    expect(last.map(({ customerNotified, ...order }) => order)).toContainEqual(final);
    const notified = states.filter((state) => state.customerNotified);
    expect(notified.length).toBeGreaterThanOrEqual(1);
    const mails = (await outbox()).slice(before);
    expect(mails.map((mail) => mail.subject).sort()).toEqual(
      notified.map((state) => `Order #2030: ${state.status.name}`).sort(),
    );
  });

  test("not when the store does not notify of status changes", async () => {
    const answer = await patch(1, { status: 3, notifyCustomer: true }, "quiet.test");
    expect(answer.status).toBe(200);
    expect(answer.json.data.customerNotified).toBe(false);
    expect(await outbox("quiet")).toEqual([]);
  });
});
