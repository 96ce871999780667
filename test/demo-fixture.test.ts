import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { renderDemo } from "../scripts/make-demo";
import { validateFixture } from "./fixture-records";

const committed = readFileSync(join(import.meta.dir, "..", "fixtures", "demo.json"), "utf8");
const demo = JSON.parse(committed);

/** Every number in a record tree that is money must have at most 2 decimals; here: all non-integers. */
function numbers(value: unknown, out: number[] = []): number[] {
  if (typeof value === "number") out.push(value);
  else if (Array.isArray(value)) for (const v of value) numbers(v, out);
  else if (value && typeof value === "object")
    for (const v of Object.values(value)) numbers(v, out);
  return out;
}

const cents = (n: number) => Math.round(n * 100);

describe("fixtures/demo.json", () => {
  test("is exactly what scripts/make-demo.ts generates (run it after changing the script)", () => {
    expect(renderDemo().text).toBe(committed);
  });

  test("passes the loader's validation", () => {
    expect(validateFixture(demo).map((s) => s.store.slug)).toEqual(["shop1", "shop2", "free-shop"]);
  });

  test("shows what the demo is for: plans, statuses, customers in all three states, pinned keys", () => {
    expect(demo.stores.map((s: { plan: string }) => s.plan)).toEqual(["growth", "pro", "free"]);
    const [shop1] = demo.stores;
    expect(new Set(shop1.customers.map((c: { status: string }) => c.status))).toEqual(
      new Set(["pending", "active", "locked"]),
    );
    expect(shop1.orderStatuses.map((s: { id: number }) => s.id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(shop1.products.length).toBe(50);
    expect(shop1.orders.length).toBe(200);
    expect(shop1.keys.map((k: { secret: string }) => k.secret)).toEqual([
      "svc_sk_demoShop1AllAccess000000000000000001",
      "svc_sk_demoShop1ReadOnly0000000000000000004",
    ]);
    const orders = shop1.orders;
    expect(orders.some((o: { customer: { email: string } }) => o.customer.email === "")).toBe(true);
    expect(orders.some((o: { coupon: unknown }) => o.coupon !== null)).toBe(true);
    expect(orders.some((o: { promotions: unknown[] }) => o.promotions.length > 0)).toBe(true);
    expect(orders.some((o: { fields: unknown[] }) => o.fields.length > 0)).toBe(true);
    expect(
      orders.some((o: { items: Array<{ options: unknown[] }> }) =>
        o.items.some((i) => i.options.length > 0),
      ),
    ).toBe(true);
  });

  test("money has at most 2 decimals and every order adds up to the agora", () => {
    for (const n of numbers(demo)) expect(cents(n) / 100).toBe(n);
    for (const store of demo.stores) {
      for (const o of store.orders) {
        const items = o.items.reduce(
          (sum: number, i: { total: number }) => sum + cents(i.total),
          0,
        );
        const promotions = o.promotions.reduce(
          (sum: number, p: { amount: number }) => sum + cents(p.amount),
          0,
        );
        expect(items + promotions + cents(o.coupon?.amount ?? 0) + cents(o.delivery.price)).toBe(
          cents(o.total),
        );
        for (const i of o.items) {
          expect(cents(i.unitPrice)).toBe(cents(i.price) + cents(i.optionsPrice));
          expect(cents(i.total)).toBe(cents(i.unitPrice) * i.quantity);
        }
      }
    }
  });

  test("date-times carry Israel offsets on both sides of the October DST change", () => {
    const stamps = demo.stores.flatMap((s: { orders: Array<{ createdAt: string }> }) =>
      s.orders.map((o) => o.createdAt),
    );
    for (const t of stamps) expect(t).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[23]:00$/);
    expect(stamps.some((t: string) => t.endsWith("+03:00"))).toBe(true);
    expect(stamps.some((t: string) => t.endsWith("+02:00"))).toBe(true);
  });
});
