import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { documentedRequests } from "./contract";
import { KEYS, otherStore, startTestServer, type TestServer, testStore } from "./helpers";

const P = "/api/v1/products";
const OLD = "2026-01-01T00:00:00+02:00";

const products = [
  {
    id: 1,
    name: "Olive oil",
    sku: "OIL",
    internalSku: "INT-OIL",
    price: 40,
    stock: 5,
    createdAt: OLD,
  },
  { id: 2, name: "Za'atar", sku: "SPICE", internalSku: "INT-ZAATAR", price: 12, createdAt: OLD },
  { id: 3, name: "Sumac", sku: "SPICE", price: 14, createdAt: OLD },
  { id: 4, name: "Tahini", sku: "TAHINI", price: 20, createdAt: OLD },
  ...Array.from({ length: 500 }, (_, i) => ({
    id: 100 + i,
    name: `Bulk ${i}`,
    internalSku: `BULK-${i}`,
    price: 1,
    stock: 0,
    createdAt: OLD,
  })),
];

let server: TestServer;
let request: ReturnType<typeof documentedRequests>;
beforeAll(async () => {
  server = await startTestServer({
    stores: [
      testStore({ products }),
      otherStore({ products: [{ id: 900, name: "Foreign", sku: "TAHINI", price: 1 }] }),
    ],
  });
  request = documentedRequests(server);
});
afterAll(() => server.stop());

const batch = (items: unknown, key?: string) =>
  request(`${P}/batch`, { method: "POST", body: { items }, key });
const product = async (id: number) => (await request(`${P}/${id}`)).json.data;

describe("POST /products/batch", () => {
  test("mixed items: valid ones applied, each invalid one fails alone, results by index", async () => {
    const answer = await batch([
      { id: 1, price: 41.5, stock: 4 },
      { internalSku: "INT-ZAATAR", visible: false },
      { sku: "TAHINI", salePrice: 18 },
      { sku: "SPICE", price: 1 },
      { sku: "NOPE", price: 1 },
      { id: 1, sku: "OIL", price: 1 },
      { price: 1 },
      { id: 999, price: 1 },
      { id: 900, price: 1 },
      { id: 4, price: 1.001 },
      { id: 4, colour: "red" },
      { id: 4 },
      "not an object",
      { id: 4, internalSku: "INT-X" },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      ok: true,
      data: {
        updated: 3,
        failed: 11,
        results: [
          { index: 0, ok: true, id: 1 },
          { index: 1, ok: true, id: 2 },
          { index: 2, ok: true, id: 4 },
          {
            index: 3,
            ok: false,
            error: {
              code: "invalid_field",
              message:
                'sku "SPICE" matches 2 products; name the product by id or internalSku instead.',
            },
          },
          {
            index: 4,
            ok: false,
            error: { code: "not_found", message: 'No product has sku "NOPE".' },
          },
          {
            index: 5,
            ok: false,
            error: {
              code: "invalid_field",
              message: 'Name the product by exactly one of "id", "internalSku" or "sku".',
            },
          },
          {
            index: 6,
            ok: false,
            error: {
              code: "invalid_field",
              message: 'Name the product by exactly one of "id", "internalSku" or "sku".',
            },
          },
          {
            index: 7,
            ok: false,
            error: { code: "not_found", message: "Product 999 was not found." },
          },
          {
            index: 8,
            ok: false,
            error: { code: "not_found", message: "Product 900 was not found." },
          },
          {
            index: 9,
            ok: false,
            error: {
              code: "invalid_field",
              message: 'Field "price" must be an amount of at least 0 with at most 2 decimals.',
            },
          },
          {
            index: 10,
            ok: false,
            error: { code: "invalid_field", message: 'Field "colour" is not allowed here.' },
          },
          {
            index: 11,
            ok: false,
            error: {
              code: "nothing_to_update",
              message:
                "The item changes nothing; send at least one field to change beside its id, internalSku or sku.",
            },
          },
          {
            index: 12,
            ok: false,
            error: { code: "invalid_field", message: "Each item must be a JSON object." },
          },
          {
            index: 13,
            ok: false,
            error: {
              code: "invalid_field",
              message: 'Name the product by exactly one of "id", "internalSku" or "sku".',
            },
          },
        ],
      },
    });
    const oil = await product(1);
    expect(oil).toMatchObject({ price: 41.5, stock: 4, name: "Olive oil" });
    expect((await product(2)).visible).toBe(false);
    expect((await product(4)).salePrice).toBe(18);
    expect((await product(4)).price).toBe(20);
    expect((await product(3)).price).toBe(14);
    // One timestamp for the batch.
    expect((await product(2)).updatedAt).toBe(oil.updatedAt);
    expect((await product(4)).updatedAt).toBe(oil.updatedAt);
    expect(oil.updatedAt).not.toBe(OLD);
  });

  test("an item that changes nothing is ok and leaves updatedAt alone", async () => {
    const before = await product(3);
    const answer = await batch([{ id: 3, price: 14, name: "Sumac" }]);
    expect(answer.json.data).toEqual({
      updated: 1,
      failed: 0,
      results: [{ index: 0, ok: true, id: 3 }],
    });
    expect(await product(3)).toEqual(before);
  });

  test("two items on one product apply in order", async () => {
    const answer = await batch([
      { id: 3, price: 15, stock: 1 },
      { sku: "TAHINI", price: 21 },
      { id: 3, stock: 2 },
    ]);
    expect(answer.json.data.updated).toBe(3);
    expect(await product(3)).toMatchObject({ price: 15, stock: 2 });
    expect((await product(4)).price).toBe(21);
  });

  test("the envelope: 1..500 items, an object with only items", async () => {
    for (const items of [[], Array.from({ length: 501 }, () => ({ id: 1, stock: 1 })), "x", null]) {
      const answer = await batch(items);
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({ code: "invalid_field", field: "items" });
    }
    const extra = await request(`${P}/batch`, {
      method: "POST",
      body: { items: [{ id: 1, stock: 1 }], dryRun: true },
    });
    expect(extra.json.error).toMatchObject({ code: "invalid_field", field: "dryRun" });
    const missing = await request(`${P}/batch`, { method: "POST", body: {} });
    expect(missing.json.error).toMatchObject({ code: "invalid_field", field: "items" });
    // Nothing of the 501 was applied.
    expect((await product(1)).stock).toBe(4);
  });

  test("500 items apply in one request", async () => {
    const items = Array.from({ length: 500 }, (_, i) =>
      i % 2 ? { id: 100 + i, stock: i } : { internalSku: `BULK-${i}`, stock: i },
    );
    const answer = await batch(items);
    expect(answer.status).toBe(200);
    expect(answer.json.data.updated).toBe(500);
    expect(answer.json.data.failed).toBe(0);
    expect(answer.json.data.results[499]).toEqual({ index: 499, ok: true, id: 599 });
    expect((await product(100)).stock).toBe(0);
    expect((await product(599)).stock).toBe(499);
    expect((await product(350)).stock).toBe(250);
  });

  test("a lone surrogate fails its item; the rest of the batch applies", async () => {
    const raw = '{"items":[{"id":4,"description":"a\\udc00"},{"id":4,"description":"ok"}]}';
    const answer = await request(`${P}/batch`, {
      method: "POST",
      raw,
      headers: { "Content-Type": "application/json" },
    });
    expect(answer.json.data.results).toEqual([
      {
        index: 0,
        ok: false,
        error: {
          code: "invalid_field",
          message: 'Field "description" must be valid Unicode text without NUL characters.',
        },
      },
      { index: 1, ok: true, id: 4 },
    ]);
    expect((await product(4)).description).toBe("ok");
  });

  test("needs products:write; a read key cannot batch", async () => {
    expect((await batch([{ id: 1, stock: 1 }], KEYS.read)).json.error.code).toBe(
      "insufficient_scope",
    );
  });

  test("GET on /products/batch is 405, not a product id", async () => {
    const answer = await request(`${P}/batch`);
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("POST");
  });
});
