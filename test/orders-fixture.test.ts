import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { loadFixture } from "../src/load/load";
import { FIXTURE_NOW, oneStoreFixture, refusalOf } from "./fixture-records";
import { tempDir } from "./helpers";
import { TEST_LIBSQL } from "./sqld";

/** Orders in fixtures (operations.md): API names and formats in, minor units stored. */

const statuses = [
  { id: 1, name: "New" },
  { id: 3, name: "Shipped" },
];
const store = (orders: unknown[]) => oneStoreFixture("orders", orders, { orderStatuses: statuses });
const refusal = (orders: unknown[]) => refusalOf("orders", orders, { orderStatuses: statuses });
const fine = (extra: Record<string, unknown> = {}) => ({
  number: 1,
  status: 1,
  total: 10,
  ...extra,
});
const many = (n: number) => Array.from({ length: n }, (_, i) => fine({ number: i + 1 }));

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function loadRows(orders: unknown[]) {
  const dir = tempDir();
  dirs.push(dir);
  await loadFixture(dir, store(orders), { now: FIXTURE_NOW });
  const db = new Database(join(dir, "stores", "a.db"));
  try {
    return db.prepare("SELECT * FROM orders ORDER BY id").all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

describe("order fixture records", () => {
  test("broken records are refused with their path", () => {
    expect(refusal([...many(12), fine({ number: 13, status: 2 })])).toBe(
      "stores[0].orders[12].status: status 2 must be one of the store's orderStatuses ids (1, 3).",
    );
    expect(refusal([fine({ id: 4 }), fine({ id: 4, number: 2 })])).toBe(
      "stores[0].orders[1].id: order id 4 appears twice.",
    );
    expect(refusal([fine(), fine()])).toBe(
      "stores[0].orders[1].number: order number 1 appears twice.",
    );
    expect(refusal([fine({ total: 1.005 })])).toBe(
      "stores[0].orders[0].total: must be an amount of at least 0 with at most 2 decimals.",
    );
    expect(refusal([fine({ total: -1 })])).toStartWith("stores[0].orders[0].total:");
    expect(refusal([fine({ total: 1_000_000_000.01 })])).toBe(
      "stores[0].orders[0].total: must be an amount of at most 1000000000.",
    );
    expect(refusal([fine({ coupon: { code: "C", amount: -2e9 } })])).toBe(
      "stores[0].orders[0].coupon.amount: must be an amount from -1000000000 to 1000000000.",
    );
    expect(refusal([{ number: 1, status: 1 }])).toBe("stores[0].orders[0].total: is required");
    expect(refusal([fine({ delivery: { name: "x", price: -5 } })])).toStartWith(
      "stores[0].orders[0].delivery.price:",
    );
    expect(
      refusal([
        fine({
          items: [
            { name: "x", productId: 1, quantity: 1, price: 1, options: [{ name: "o", price: -1 }] },
          ],
        }),
      ]),
    ).toStartWith("stores[0].orders[0].items[0].options[0].price:");
    expect(
      refusal([fine({ items: [{ name: "x", productId: 1, quantity: 0, price: 1 }] })]),
    ).toStartWith("stores[0].orders[0].items[0].quantity:");
    // Amounts made from the others are bounded as given ones are.
    const item = { name: "x", productId: 1, quantity: 2 ** 52, price: 1e9 };
    expect(refusal([fine({ items: [item] })])).toBe(
      "stores[0].orders[0].items[0].total: unitPrice × quantity is over 1000000000; give total or smaller amounts.",
    );
    const options = [1, 2].map((i) => ({ name: `o${i}`, price: 1e9 }));
    expect(refusal([fine({ items: [{ ...item, quantity: 1, options }] })])).toBe(
      "stores[0].orders[0].items[0].optionsPrice: the sum of the options' prices is over 1000000000; give optionsPrice or smaller amounts.",
    );
    expect(
      refusal([fine({ items: [{ ...item, quantity: 1, options: [options[0]], total: 5 }] })]),
    ).toBe(
      "stores[0].orders[0].items[0].unitPrice: price + optionsPrice is over 1000000000; give unitPrice or smaller amounts.",
    );
    expect(refusal([fine({ coupon: { code: "C", amount: -1.001 } })])).toStartWith(
      "stores[0].orders[0].coupon.amount:",
    );
    expect(refusal([fine({ promotions: [{ name: "p", amount: 0.001 }] })])).toStartWith(
      "stores[0].orders[0].promotions[0].amount:",
    );
    expect(refusal([fine({ customer: { email: "not-an-email" } })])).toBe(
      "stores[0].orders[0].customer.email: must be a valid email address.",
    );
    expect(refusal([fine({ payType: "cheque" })])).toStartWith(
      "stores[0].orders[0].payType: must be one of credit_card, paypal",
    );
    expect(refusal([fine({ colour: "red" })])).toStartWith("stores[0].orders[0].colour:");
    expect(
      refusal([fine({ createdAt: "2026-02-01", updatedAt: "2026-01-31T23:59:59+02:00" })]),
    ).toBe("stores[0].orders[0].updatedAt: must not be before createdAt.");
    expect(refusal([fine({ createdAt: "yesterday" })])).toStartWith(
      "stores[0].orders[0].createdAt:",
    );
    expect(
      refusal([
        fine({
          customer: { email: "" },
          coupon: { code: "C", amount: -5 },
          promotions: [{ name: "p", amount: -0.5 }],
        }),
      ]),
    ).toBe("accepted");
  });

  // Reads the store file directly.
  test.skipIf(TEST_LIBSQL)(
    "a record's id leaves room for the ids assigned after it: at most 2^52, and the next is exact",
    async () => {
      expect(refusal([fine({ id: 2 ** 52 + 1 })])).toBe(
        "stores[0].orders[0].id: must be a positive whole number up to 4503599627370496.",
      );
      expect(refusal([fine({ id: Number.MAX_SAFE_INTEGER })])).toStartWith(
        "stores[0].orders[0].id: must be a positive whole number up to",
      );
      const rows = await loadRows([fine({ id: 2 ** 52 }), fine({ number: 2 })]);
      expect(rows.map((r) => r.id)).toEqual([2 ** 52, 2 ** 52 + 1]);
    },
  );

  // Reads the store file directly.
  test.skipIf(TEST_LIBSQL)(
    "stored as minor units and API-shaped JSON; defaults filled; createdAt now when missing",
    async () => {
      const [row] = await loadRows([
        {
          id: 5,
          number: 77,
          status: 3,
          total: 99.99,
          paypalFee: 1.2,
          customer: { id: 3, name: "Dana", email: "", phone: "050", address: "Herzl 1" },
          coupon: { code: "C", amount: -5.5 },
          items: [
            {
              name: "Tea",
              productId: 2,
              quantity: 3,
              price: 10.1,
              options: [{ name: "Big", price: 0.5 }],
            },
          ],
          promotions: [{ name: "p", amount: -1 }],
        },
      ]);
      expect(row).toMatchObject({
        id: 5,
        number: 77,
        status_id: 3,
        paid: 0,
        total: 9999,
        vat: null,
        pay_type: "other",
        paypal_fee: 120,
        customer_id: 3,
        customer_email: "",
        delivery_name: "",
        delivery_price: 0,
        invoice: null,
        fields: "[]",
        created_at: 1_000,
        updated_at: null,
      });
      expect(JSON.parse(row.coupon as string)).toEqual({
        code: "C",
        description: "",
        amount: -550,
      });
      expect(JSON.parse(row.promotions as string)).toEqual([
        { name: "p", amount: -100, productId: null },
      ]);
      expect(JSON.parse(row.items as string)).toEqual([
        {
          name: "Tea",
          sku: "",
          productId: 2,
          quantity: 3,
          price: 1010,
          optionsPrice: 50,
          unitPrice: 1060,
          total: 3180,
          unitName: null,
          vatFree: false,
          options: [{ name: "Big", price: 50 }],
        },
      ]);
    },
  );

  // Reads the store file directly.
  test.skipIf(TEST_LIBSQL)(
    "ids are assigned when missing and never collide with ids named later",
    async () => {
      const rows = await loadRows([
        fine({ number: 1 }),
        fine({ number: 2, id: 1 }),
        fine({ number: 3 }),
        fine({ number: 4, id: 2 }),
      ]);
      expect(rows.map((r) => [r.id, r.number])).toEqual([
        [1, 2],
        [2, 4],
        [3, 1],
        [4, 3],
      ]);
    },
  );
});
