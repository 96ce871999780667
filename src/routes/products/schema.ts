import * as v from "valibot";
import {
  bool,
  cursorParam,
  dateTimeOut,
  dateTimeParam,
  filledText,
  idOut,
  limitParam,
  money,
  moneyOut,
  nullableMoney,
  nullableMoneyOut,
  nullableText,
  text,
} from "../../http/schemas";

/** Highest `stock` accepted: far above any real stock, and always a safe integer. */
const MAX_STOCK = 1_000_000_000;

/** Field pieces shared by create, update, batch items and fixture records. */
/** A SKU names a product (batch items use it), so it is null or non-empty. */
const skuText = () =>
  v.nullable(
    v.pipe(
      text(64),
      v.minLength(1, "must not be empty; send null for none."),
      v.metadata({ minLength: 1 }),
    ),
  );
const stock = () =>
  v.nullable(
    v.pipe(
      v.number("must be a whole number of at least 0, or null."),
      v.check(
        (n) => Number.isInteger(n) && n >= 0 && n <= MAX_STOCK,
        `must be a whole number from 0 to ${MAX_STOCK}, or null.`,
      ),
      v.metadata({ type: "integer", minimum: 0, maximum: MAX_STOCK }),
    ),
  );

/** Every field a client may set on a product (all optional: update semantics). */
export const productFields = {
  name: v.optional(filledText(100)),
  sku: v.optional(skuText()),
  internalSku: v.optional(skuText()),
  price: v.optional(money()),
  salePrice: v.optional(nullableMoney()),
  stock: v.optional(stock()),
  visible: v.optional(bool()),
  description: v.optional(nullableText(5000)),
  vatFree: v.optional(bool()),
  unitName: v.optional(nullableText(32)),
};

export const createBody = v.strictObject({
  ...productFields,
  name: filledText(100),
  price: money(),
});

export const updateBody = v.strictObject(productFields);

export type ProductChanges = v.InferOutput<typeof updateBody>;

export const listQuery = v.strictObject({
  limit: limitParam(),
  cursor: cursorParam(),
  updated_since: dateTimeParam(),
});

/** The answer shape (documentation). */
export const productOut = v.pipe(
  v.object({
    id: idOut(),
    name: v.string(),
    sku: v.nullable(v.string()),
    internalSku: v.nullable(v.string()),
    price: moneyOut(),
    salePrice: nullableMoneyOut(),
    stock: v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0))),
    visible: v.boolean(),
    description: v.nullable(v.string()),
    vatFree: v.boolean(),
    unitName: v.nullable(v.string()),
    createdAt: dateTimeOut(),
    updatedAt: dateTimeOut(),
  }),
  v.title("Product"),
);

export type Product = v.InferOutput<typeof productOut>;
