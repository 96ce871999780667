import * as v from "valibot";
import type { Queryable, SqlValue } from "../../db/driver";
import { MAX_MINOR, toSignedMinor } from "../../format/money";
import {
  bool,
  email,
  MAX_MONEY,
  money,
  nullableText,
  SIGNED_MONEY_KEYWORDS,
  text,
} from "../../http/schemas";
import { type FixtureSection, fixtureDateTime, fixtureId, repeatedId } from "../../load/section";
import type { StoredCoupon, StoredField, StoredInvoice, StoredItem, StoredPromotion } from "./row";
import { PAY_TYPES } from "./schema";

/**
 * Orders in a fixture (operations.md): the API's field names and formats, `status` as
 * the status id. Orders come from checkout, never from the API, so this is the only
 * way they enter a store besides the bench generator.
 */

const positiveInt = (message = "must be a positive whole number.") =>
  v.pipe(v.number(message), v.safeInteger(message), v.minValue(1, message));

/** Money that may be negative (a discount): at most 2 decimals → minor units. */
const signedMoney = () =>
  v.pipe(
    v.number("must be a number."),
    v.check(
      (n) => !(Math.abs(n) > MAX_MONEY),
      `must be an amount from -${MAX_MONEY} to ${MAX_MONEY}.`,
    ),
    v.check((n) => toSignedMinor(n) !== null, "must be an amount with at most 2 decimals."),
    v.metadata(SIGNED_MONEY_KEYWORDS),
    v.transform((n) => toSignedMinor(n) as number),
  );

const optionRecord = v.strictObject({ name: text(100), price: money() });

/** An item's amounts, minor units: given, or what the other fields make. */
function itemAmounts(i: {
  quantity: number;
  price: number;
  optionsPrice?: number;
  unitPrice?: number;
  total?: number;
  options: Array<{ price: number }>;
}) {
  const optionsPrice = i.optionsPrice ?? i.options.reduce((sum, o) => sum + o.price, 0);
  const unitPrice = i.unitPrice ?? i.price + optionsPrice;
  return { optionsPrice, unitPrice, total: i.total ?? unitPrice * i.quantity };
}

/** A made amount past the maximum would be stored although the same amount given is refused. */
const madeAmountAtMost = (field: "optionsPrice" | "unitPrice" | "total", makes: string) =>
  v.forward(
    v.check<ItemInput, string>(
      (i) => itemAmounts(i)[field] <= MAX_MINOR,
      `${makes} is over ${MAX_MONEY}; give ${field} or smaller amounts.`,
    ),
    [field],
  );

const itemFields = v.strictObject({
  name: text(100),
  sku: v.optional(text(64), ""),
  productId: positiveInt(),
  quantity: positiveInt(),
  price: money(),
  optionsPrice: v.optional(money()),
  unitPrice: v.optional(money()),
  total: v.optional(money()),
  unitName: v.optional(nullableText(32), null),
  vatFree: v.optional(bool(), false),
  options: v.optional(v.array(optionRecord), []),
});
type ItemInput = v.InferOutput<typeof itemFields>;

/** An item; `optionsPrice`, `unitPrice` and `total` default to what the other fields make. */
const itemRecord = v.pipe(
  itemFields,
  madeAmountAtMost("optionsPrice", "the sum of the options' prices"),
  madeAmountAtMost("unitPrice", "price + optionsPrice"),
  madeAmountAtMost("total", "unitPrice × quantity"),
  v.transform(
    (i): StoredItem => ({
      name: i.name,
      sku: i.sku,
      productId: i.productId,
      quantity: i.quantity,
      price: i.price,
      ...itemAmounts(i),
      unitName: i.unitName,
      vatFree: i.vatFree,
      options: i.options,
    }),
  ),
);

const promotionRecord = v.pipe(
  v.strictObject({
    name: text(100),
    amount: signedMoney(),
    productId: v.optional(v.nullable(positiveInt()), null),
  }),
  v.transform((p): StoredPromotion => ({ name: p.name, amount: p.amount, productId: p.productId })),
);

const couponRecord = v.pipe(
  v.strictObject({ code: text(64), description: v.optional(text(500), ""), amount: signedMoney() }),
  v.transform(
    (c): StoredCoupon => ({ code: c.code, description: c.description, amount: c.amount }),
  ),
);

const fieldRecord = v.pipe(
  v.strictObject({ name: text(100), value: text(5000) }),
  v.transform((f): StoredField => ({ name: f.name, value: f.value })),
);

const invoiceRecord = v.pipe(
  v.strictObject({ number: positiveInt(), url: text(2000) }),
  v.transform((i): StoredInvoice => ({ number: i.number, url: i.url })),
);

const customerRecord = v.strictObject({
  id: v.optional(v.nullable(positiveInt()), null),
  name: v.optional(text(100), ""),
  email: v.optional(v.union([v.literal(""), email()], 'must be an email address or "".'), ""),
  phone: v.optional(text(32), ""),
  address: v.optional(text(500), ""),
});

/** An order record (operations.md); the management API takes it without `id`. */
export const orderRecord = v.strictObject({
  id: v.optional(fixtureId()),
  number: positiveInt(),
  status: positiveInt("must be a status id (a positive whole number)."),
  paid: v.optional(bool(), false),
  total: money(),
  vat: v.optional(v.nullable(money()), null),
  payType: v.optional(v.picklist(PAY_TYPES, `must be one of ${PAY_TYPES.join(", ")}.`), "other"),
  payments: v.optional(v.nullable(positiveInt()), null),
  paypalFee: v.optional(v.nullable(money()), null),
  trackingNumber: v.optional(nullableText(100), null),
  adminNotes: v.optional(nullableText(5000), null),
  customerNotes: v.optional(text(5000), ""),
  newsletter: v.optional(bool(), false),
  customer: v.optional(customerRecord, {}),
  delivery: v.optional(
    v.strictObject({ name: v.optional(text(100), ""), price: v.optional(money(), 0) }),
    {},
  ),
  coupon: v.optional(v.nullable(couponRecord), null),
  fields: v.optional(v.array(fieldRecord), []),
  invoice: v.optional(v.nullable(invoiceRecord), null),
  items: v.optional(v.array(itemRecord), []),
  promotions: v.optional(v.array(promotionRecord), []),
  createdAt: v.optional(fixtureDateTime()),
  updatedAt: v.optional(v.nullable(fixtureDateTime()), null),
});

export type OrderRecord = v.InferOutput<typeof orderRecord>;

/** Column order of the insert; `argsOf` follows it. */
const INSERT_SQL = `INSERT INTO orders (id, number, status_id, paid, total, vat, pay_type, payments, paypal_fee,
  tracking_number, admin_notes, customer_notes, newsletter, customer_id, customer_name, customer_email,
  customer_phone, customer_address, delivery_name, delivery_price, coupon, fields, invoice, items, promotions,
  created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

function argsOf(o: OrderRecord): SqlValue[] {
  return [
    o.id ?? null,
    o.number,
    o.status,
    Number(o.paid),
    o.total,
    o.vat,
    o.payType,
    o.payments,
    o.paypalFee,
    o.trackingNumber,
    o.adminNotes,
    o.customerNotes,
    Number(o.newsletter),
    o.customer.id,
    o.customer.name,
    o.customer.email,
    o.customer.phone,
    o.customer.address,
    o.delivery.name,
    o.delivery.price,
    o.coupon === null ? null : JSON.stringify(o.coupon),
    JSON.stringify(o.fields),
    o.invoice === null ? null : JSON.stringify(o.invoice),
    JSON.stringify(o.items),
    JSON.stringify(o.promotions),
    o.createdAt ?? null,
    o.updatedAt,
  ];
}

export const orderFixture: FixtureSection<OrderRecord> = {
  name: "orders",
  schema: orderRecord,
  check(order, context, seen) {
    if (!context.statusIds.has(order.status)) {
      const ids = [...context.statusIds].sort((a, b) => a - b);
      const known = ids.length
        ? `one of the store's orderStatuses ids (${ids.join(", ")})`
        : "an id in the store's orderStatuses (it has none)";
      return ["status", `status ${order.status} must be ${known}.`];
    }
    const repeated = repeatedId(seen, "order", order.id);
    if (repeated) return repeated;
    if (seen.has(`number:${order.number}`))
      return ["number", `order number ${order.number} appears twice.`];
    seen.set(`number:${order.number}`, true);
    order.createdAt ??= context.now; // "now when missing" means the load's time
    if (order.updatedAt !== null && order.updatedAt < order.createdAt)
      return ["updatedAt", "must not be before createdAt."];
    return null;
  },
  /** One statement text: the driver prepares it once and reuses it for every row. */
  async insert(tx: Queryable, orders: OrderRecord[]) {
    for (const order of orders) await tx.run(INSERT_SQL, argsOf(order));
  },
};
