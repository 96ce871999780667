import * as v from "valibot";
import {
  bool,
  booleanParam,
  cursorParam,
  dateTimeOut,
  dateTimeParam,
  idOut,
  idParam,
  limitParam,
  moneyOut,
  nullableDateTimeOut,
  nullableMoneyOut,
  nullableText,
  SIGNED_MONEY_KEYWORDS,
} from "../../http/schemas";

/** How an order was paid (api-contract.md §7). */
export const PAY_TYPES = [
  "credit_card",
  "paypal",
  "bank_transfer",
  "cash",
  "bit",
  "other",
] as const;
export type PayType = (typeof PAY_TYPES)[number];

/** Statuses that never cause a status email (original-spec.md §3). */
export const SILENT_STATUSES: ReadonlySet<number> = new Set([1, 2]);

/** `GET /orders` query: the list conventions plus `status` and `paid`. Unknown parameters are 400. */
export const listQuery = v.strictObject({
  limit: limitParam(),
  cursor: cursorParam(),
  created_since: dateTimeParam(),
  status: v.optional(idParam()),
  paid: booleanParam(),
});

/** `PATCH /orders/{id}` body (OrderUpdate). */
export const updateBody = v.strictObject({
  status: v.optional(
    v.pipe(
      v.number("must be a whole number (a status id)."),
      v.integer("must be a whole number (a status id)."),
      v.metadata({ description: "One of the store's order status ids." }),
    ),
  ),
  paid: v.optional(bool()),
  trackingNumber: v.optional(nullableText(100)),
  adminNotes: v.optional(nullableText(5000)),
  notifyCustomer: v.optional(bool(), false),
});

export type UpdateBody = v.InferOutput<typeof updateBody>;

/** Money out that may be negative (discounts). */
const signedMoneyOut = () =>
  v.pipe(
    v.number(),
    v.metadata({
      ...SIGNED_MONEY_KEYWORDS,
      description: "An amount with at most 2 decimals; negative for a discount.",
    }),
  );

const optionOut = v.object({ name: v.string(), price: moneyOut() });

const orderItemOut = v.object({
  name: v.string(),
  sku: v.string(),
  productId: idOut(),
  quantity: v.pipe(v.number(), v.integer(), v.minValue(1)),
  price: moneyOut(),
  optionsPrice: moneyOut(),
  unitPrice: moneyOut(),
  total: moneyOut(),
  unitName: v.nullable(v.string()),
  vatFree: v.boolean(),
  options: v.array(optionOut),
});

const orderFields = {
  id: idOut(),
  number: v.pipe(v.number(), v.integer(), v.metadata({ description: "The store's order number." })),
  status: v.object({ id: v.pipe(v.number(), v.integer()), name: v.string() }),
  paid: v.boolean(),
  total: moneyOut(),
  vat: v.pipe(nullableMoneyOut(), v.metadata({ description: "The order's VAT amount." })),
  payType: v.picklist(PAY_TYPES),
  payments: v.pipe(
    v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))),
    v.metadata({ description: "Number of instalments." }),
  ),
  paypalFee: nullableMoneyOut(),
  trackingNumber: v.nullable(v.string()),
  adminNotes: v.nullable(v.string()),
  customerNotes: v.pipe(
    v.string(),
    v.metadata({ description: 'The customer\'s notes; "" when none.' }),
  ),
  newsletter: v.boolean(),
  createdAt: dateTimeOut(),
  updatedAt: nullableDateTimeOut(),
  customer: v.object({
    id: v.nullable(idOut()),
    name: v.string(),
    email: v.pipe(
      v.string(),
      v.metadata({ description: 'The order\'s email address; "" when it has none.' }),
    ),
    phone: v.string(),
    address: v.string(),
  }),
  delivery: v.object({ name: v.string(), price: moneyOut() }),
  coupon: v.nullable(
    v.object({
      code: v.string(),
      description: v.string(),
      amount: v.pipe(signedMoneyOut(), v.metadata({ description: "Negative for a discount." })),
    }),
  ),
  fields: v.array(v.object({ name: v.string(), value: v.string() })),
  invoice: v.nullable(v.object({ number: v.pipe(v.number(), v.integer()), url: v.string() })),
  items: v.array(orderItemOut),
  promotions: v.array(
    v.object({
      name: v.string(),
      amount: v.pipe(signedMoneyOut(), v.metadata({ description: "Negative for a discount." })),
      productId: v.nullable(idOut()),
    }),
  ),
};

/** The Order answer (`data` of GET /orders/{id}, and each item of GET /orders). */
export const orderOut = v.object(orderFields);

/** The PATCH answer: the Order plus whether the status email was queued. */
export const updatedOrderOut = v.object({
  ...orderFields,
  customerNotified: v.pipe(
    v.boolean(),
    v.metadata({ description: "True when the status email was queued." }),
  ),
});
