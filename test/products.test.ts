import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { documentedRequests } from "./contract";
import { KEYS, otherStore, startTestServer, type TestServer, testStore } from "./helpers";

const P = "/api/v1/products";
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[23]:00$/;

const fixtureProducts = [
  {
    id: 1,
    name: "Olive oil 750ml",
    sku: "OIL-750",
    internalSku: "INT-1",
    price: 39.9,
    salePrice: 34.9,
    stock: 12,
    visible: true,
    description: "Cold pressed.",
    vatFree: false,
    unitName: "bottle",
    createdAt: "2026-01-10T10:00:00+02:00",
    updatedAt: "2026-01-12T08:30:00+02:00",
  },
  { id: 2, name: "Za'atar", sku: "SPICE", price: 12, createdAt: "2026-01-11T10:00:00+02:00" },
  {
    id: 3,
    name: "Sumac",
    sku: "SPICE",
    price: 14.5,
    createdAt: "2026-01-11T10:00:00+02:00",
    updatedAt: "2026-07-01T12:00:00+03:00",
  },
];

let server: TestServer;
let request: ReturnType<typeof documentedRequests>;
beforeAll(async () => {
  server = await startTestServer({
    stores: [
      testStore({ products: fixtureProducts }),
      otherStore({ products: [{ id: 50, name: "Foreign", price: 1 }] }),
    ],
  });
  request = documentedRequests(server);
});
afterAll(() => server.stop());

const create = (body: unknown, options: { key?: string; headers?: Record<string, string> } = {}) =>
  request(P, { method: "POST", body, ...options });
const patch = (id: number | string, body: unknown, key?: string) =>
  request(`${P}/${id}`, { method: "PATCH", body, key });

describe("GET /products", () => {
  test("a product has every field, with exact values", async () => {
    const answer = await request(`${P}/1`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      ok: true,
      data: {
        id: 1,
        name: "Olive oil 750ml",
        sku: "OIL-750",
        internalSku: "INT-1",
        price: 39.9,
        salePrice: 34.9,
        stock: 12,
        visible: true,
        description: "Cold pressed.",
        vatFree: false,
        unitName: "bottle",
        createdAt: "2026-01-10T10:00:00+02:00",
        updatedAt: "2026-01-12T08:30:00+02:00",
      },
    });
  });

  test("fixture defaults: nullable fields null, visible true, vatFree false, updatedAt = createdAt", async () => {
    const answer = await request(`${P}/2`);
    expect(answer.json.data).toEqual({
      id: 2,
      name: "Za'atar",
      sku: "SPICE",
      internalSku: null,
      price: 12,
      salePrice: null,
      stock: null,
      visible: true,
      description: null,
      vatFree: false,
      unitName: null,
      createdAt: "2026-01-11T10:00:00+02:00",
      updatedAt: "2026-01-11T10:00:00+02:00",
    });
  });

  test("unknown, foreign and malformed ids", async () => {
    expect((await request(`${P}/999`)).json.error.code).toBe("not_found");
    expect((await request(`${P}/50`)).status).toBe(404);
    const bad = await request(`${P}/abc`);
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("invalid_parameter");
  });

  test("lists newest updatedAt first, updated_since is inclusive", async () => {
    const list = await request(`${P}?updated_since=2026-01-11T10:00:00%2B02:00`);
    expect(list.status).toBe(200);
    expect(list.json.data.map((p: { id: number }) => p.id).slice(-3)).toEqual([3, 1, 2]);
    const since = await request(`${P}?updated_since=2026-07-01T12:00:00%2B03:00`);
    expect(since.json.data.map((p: { id: number }) => p.id)).toContain(3);
    expect(since.json.data.map((p: { id: number }) => p.id)).not.toContain(1);
    expect((await request(`${P}?updated_since=yesterday`)).json.error.code).toBe(
      "invalid_parameter",
    );
    expect((await request(`${P}?created_since=2026-01-01`)).json.error.code).toBe(
      "invalid_parameter",
    );
  });

  test("pages with a cursor bound to its filters", async () => {
    const first = await request(`${P}?limit=1&updated_since=2026-01-01`);
    expect(first.json.hasMore).toBe(true);
    const second = await request(
      `${P}?limit=1&updated_since=2026-01-01&cursor=${first.json.nextCursor}`,
    );
    expect(second.json.data[0].id).not.toBe(first.json.data[0].id);
    const other = await request(
      `${P}?limit=1&updated_since=2026-01-02&cursor=${first.json.nextCursor}`,
    );
    expect(other.json.error.code).toBe("invalid_parameter");
  });

  test("needs products:read", async () => {
    expect((await request(P, { key: KEYS.none })).json.error.code).toBe("insufficient_scope");
    expect((await request(P, { key: KEYS.read })).status).toBe(200);
  });
});

describe("POST /products", () => {
  test("creates with defaults", async () => {
    const answer = await create({ name: "Tahini", price: 19.99 });
    expect(answer.status).toBe(201);
    const { id, createdAt, updatedAt, ...rest } = answer.json.data;
    expect(rest).toEqual({
      name: "Tahini",
      sku: null,
      internalSku: null,
      price: 19.99,
      salePrice: null,
      stock: null,
      visible: true,
      description: null,
      vatFree: false,
      unitName: null,
    });
    expect(createdAt).toMatch(DATE_TIME);
    expect(updatedAt).toBe(createdAt);
    expect((await request(`${P}/${id}`)).json.data).toEqual(answer.json.data);
  });

  test("stores every field as sent", async () => {
    const body = {
      name: "Dates 1kg",
      sku: "DATES",
      internalSku: "INT-DATES",
      price: 0,
      salePrice: 0.5,
      stock: 0,
      visible: false,
      description: "  Medjool  ",
      vatFree: true,
      unitName: "box",
    };
    const answer = await create(body);
    expect(answer.status).toBe(201);
    expect(answer.json.data).toMatchObject(body);
  });

  test("money: at most 2 decimals, at least 0", async () => {
    for (const price of [1.005, -1, "10", null]) {
      const answer = await create({ name: "X", price });
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({ code: "invalid_field", field: "price" });
    }
    expect((await create({ name: "X", price: 5, salePrice: 0.001 })).json.error.field).toBe(
      "salePrice",
    );
    // Over the largest amount: the message names it, not the rules the value meets.
    expect((await create({ name: "X", price: 10_000_000_000 })).json.error.message).toBe(
      'Field "price" must be an amount of at most 1000000000.',
    );
    expect((await create({ name: "X", price: 1_000_000_000 })).status).toBe(201);
  });

  test("required fields, lengths, types and unknown fields", async () => {
    const cases: Array<[unknown, string]> = [
      [{ price: 1 }, "name"],
      [{ name: "X" }, "price"],
      [{ name: "", price: 1 }, "name"],
      [{ name: "n".repeat(101), price: 1 }, "name"],
      [{ name: "X", price: 1, sku: "s".repeat(65) }, "sku"],
      [{ name: "X", price: 1, internalSku: "" }, "internalSku"],
      [{ name: "X", price: 1, unitName: "u".repeat(33) }, "unitName"],
      [{ name: "X", price: 1, description: "d".repeat(5001) }, "description"],
      [{ name: "X", price: 1, stock: -1 }, "stock"],
      [{ name: "X", price: 1, stock: 1.5 }, "stock"],
      [{ name: "X", price: 1, stock: "3" }, "stock"],
      [{ name: "X", price: 1, stock: true }, "stock"],
      [{ name: "X", price: 1, visible: "yes" }, "visible"],
      [{ name: "X", price: 1, colour: "red" }, "colour"],
    ];
    for (const [body, field] of cases) {
      const answer = await create(body);
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({ code: "invalid_field", field });
    }
    // Text the database could not keep exactly is refused, not altered.
    for (const raw of ['{"name":"a\\u0000b","price":1}', '{"name":"a\\ud800b","price":1}']) {
      const answer = await request(P, {
        method: "POST",
        raw,
        headers: { "Content-Type": "application/json" },
      });
      expect(answer.json.error).toMatchObject({ code: "invalid_field", field: "name" });
    }
    expect((await create({ name: "X", price: 1, stock: null })).json.data.stock).toBeNull();
    // Lengths count characters, not bytes or UTF-16 units.
    expect((await create({ name: "😀".repeat(100), price: 1 })).status).toBe(201);
  });

  test("internalSku is unique in the store; sku need not be", async () => {
    const clash = await create({ name: "X", price: 1, internalSku: "INT-1" });
    expect(clash.status).toBe(400);
    expect(clash.json.error).toMatchObject({ code: "invalid_field", field: "internalSku" });
    expect((await create({ name: "X", price: 1, sku: "SPICE" })).status).toBe(201);
    // Another store may use the same internalSku.
    expect(
      (
        await create(
          { name: "X", price: 1, internalSku: "INT-1" },
          { key: KEYS.other, headers: { Host: "shop2.test" } },
        )
      ).status,
    ).toBe(201);
  });

  test("needs products:write", async () => {
    expect((await create({ name: "X", price: 1 }, { key: KEYS.read })).json.error.code).toBe(
      "insufficient_scope",
    );
  });
});

describe("PATCH /products/{id}", () => {
  test("changes only the fields sent and moves updatedAt", async () => {
    const before = (await request(`${P}/3`)).json.data;
    const answer = await patch(3, { price: 15, stock: null, description: "Tangy." });
    expect(answer.status).toBe(200);
    const { updatedAt, ...rest } = answer.json.data;
    expect(rest).toEqual({
      ...before,
      price: 15,
      stock: null,
      description: "Tangy.",
      updatedAt: undefined,
    });
    expect(updatedAt).not.toBe(before.updatedAt);
    expect((await request(`${P}/3`)).json.data).toEqual(answer.json.data);
  });

  test("values equal to the present ones change nothing, not even updatedAt", async () => {
    const before = (await request(`${P}/1`)).json.data;
    const answer = await patch(1, { price: 39.9, visible: true, internalSku: "INT-1" });
    expect(answer.status).toBe(200);
    expect(answer.json.data).toEqual(before);
  });

  test("nothing to update, bad fields, unknown product, internalSku clash", async () => {
    expect((await patch(1, {})).json.error.code).toBe("nothing_to_update");
    expect((await patch(999, {})).json.error.code).toBe("nothing_to_update");
    expect((await patch(1, { price: 1.001 })).json.error).toMatchObject({
      code: "invalid_field",
      field: "price",
    });
    expect((await patch(1, { name: null })).json.error).toMatchObject({
      code: "invalid_field",
      field: "name",
    });
    expect((await patch(1, { id: 7 })).json.error).toMatchObject({
      code: "invalid_field",
      field: "id",
    });
    expect((await patch(999, { price: 1 })).status).toBe(404);
    expect((await patch(50, { price: 1 })).status).toBe(404);
    const created = (await create({ name: "Y", price: 1, internalSku: "INT-Y" })).json.data;
    const clash = await patch(created.id, { internalSku: "INT-1" });
    expect(clash.status).toBe(400);
    expect(clash.json.error).toMatchObject({ code: "invalid_field", field: "internalSku" });
    // A field error answers before a missing product's 404 (contract check order).
    const clashOnMissing = await patch(999, { internalSku: "INT-1" });
    expect([clashOnMissing.status, clashOnMissing.json.error.field]).toEqual([400, "internalSku"]);
    expect((await patch(created.id, { internalSku: null })).json.data.internalSku).toBeNull();
  });
});

describe("plan limits", () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `P${i}`, price: 1 }));

  test("a growth store at 5,000 products gets 409 plan_limit; enterprise is unlimited", async () => {
    const limited = await startTestServer({
      stores: [
        testStore({ products: [{ name: "First", price: 1, internalSku: "FIRST" }, ...many(4999)] }),
        otherStore({ plan: "enterprise", products: many(5000) }),
        testStore({
          slug: "pro",
          domain: "pro.test",
          plan: "pro",
          keys: [{ name: "k", secret: KEYS.read, permissions: { products: "write" } }],
          products: many(4999),
        }),
      ],
    });
    try {
      const full = await limited.request(P, {
        method: "POST",
        body: { name: "One more", price: 1 },
      });
      expect(full.status).toBe(409);
      expect(full.json.error.code).toBe("plan_limit");
      expect(full.json.error.message).toBe(
        "The growth plan allows at most 5,000 products; upgrade the store's plan to add more.",
      );
      // A clashing internalSku is a 400 even when the store is full (checks in contract order).
      const clash = await limited.request(P, {
        method: "POST",
        body: { name: "One more", price: 1, internalSku: "FIRST" },
      });
      expect(clash.json.error).toMatchObject({ code: "invalid_field", field: "internalSku" });
      const enterprise = await limited.request(P, {
        method: "POST",
        host: "shop2.test",
        key: KEYS.other,
        body: { name: "One more", price: 1 },
      });
      expect(enterprise.status).toBe(201);
      const pro = await limited.request(P, {
        method: "POST",
        host: "pro.test",
        key: KEYS.read,
        body: { name: "One more", price: 1 },
      });
      expect(pro.status).toBe(201);
    } finally {
      await limited.stop();
    }
  });
});

describe("idempotent POST", () => {
  test("the same Idempotency-Key replays the first answer and creates nothing", async () => {
    const headers = { "Idempotency-Key": "create-tahini-42" };
    const first = await create({ name: "Replay", price: 3 }, { headers });
    const second = await create({ price: 3, name: "Replay" }, { headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.text).toBe(first.text);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    const list = await request(`${P}?limit=100`);
    expect(list.json.data.filter((p: { name: string }) => p.name === "Replay")).toHaveLength(1);
    const different = await create({ name: "Replay", price: 4 }, { headers });
    expect(different.json.error).toMatchObject({
      code: "invalid_parameter",
      field: "Idempotency-Key",
    });
  });
});
