import { describe, expect, test } from "bun:test";
import { refusalOf, sectionRows } from "./fixture-records";

const rows = (products: unknown[]) => sectionRows("products", products);
const refusal = (products: unknown[]) => refusalOf("products", products);

describe("product fixture records", () => {
  test("defaults: nullable fields null, visible true, vatFree false, timestamps now, updatedAt = createdAt", () => {
    expect(
      rows([
        { name: "A", price: 1.5 },
        { id: 7, name: "B", price: 2, createdAt: "2026-01-01T00:00:00Z" },
      ]),
    ).toEqual([
      {
        id: null,
        name: "A",
        sku: null,
        internal_sku: null,
        price: 150,
        sale_price: null,
        stock: null,
        visible: 1,
        description: null,
        vat_free: 0,
        unit_name: null,
        created_at: 1_000,
        updated_at: 1_000,
      },
      {
        id: 7,
        name: "B",
        sku: null,
        internal_sku: null,
        price: 200,
        sale_price: null,
        stock: null,
        visible: 1,
        description: null,
        vat_free: 0,
        unit_name: null,
        created_at: 1767225600000,
        updated_at: 1767225600000,
      },
    ]);
  });

  test("broken records are refused with their path", () => {
    const fine = { name: "A", price: 1 };
    expect(
      refusal([fine, fine, fine, { ...fine, internalSku: "X" }, { ...fine, internalSku: "X" }]),
    ).toBe(
      'stores[0].products[4].internalSku: internalSku "X" is also used by another product; it must be unique in the store.',
    );
    expect(
      refusal([
        { ...fine, id: 1 },
        { ...fine, id: 1 },
      ]),
    ).toBe("stores[0].products[1].id: product id 1 appears twice.");
    expect(refusal([{ ...fine, id: 2 ** 52 + 1 }])).toBe(
      "stores[0].products[0].id: must be a positive whole number up to 4503599627370496.",
    );
    expect(refusal([{ name: "A" }])).toBe("stores[0].products[0].price: is required");
    expect(refusal([{ ...fine, price: 1.005 }])).toBe(
      "stores[0].products[0].price: must be an amount of at least 0 with at most 2 decimals.",
    );
    expect(refusal([{ ...fine, stock: -1 }])).toStartWith("stores[0].products[0].stock:");
    expect(refusal([{ ...fine, colour: "red" }])).toStartWith("stores[0].products[0].colour:");
    expect(refusal([{ ...fine, createdAt: "2026-02-01", updatedAt: "2026-01-01" }])).toBe(
      "stores[0].products[0].updatedAt: must not be before createdAt.",
    );
  });
});
