import * as v from "valibot";
import { fromMinor, fromMinorOrNull } from "../../format/money";
import { formatIsrael } from "../../format/time";
import {
  bool,
  cursorParam,
  dateTimeOut,
  dateTimeParam,
  idOut,
  limitParam,
  money,
  moneyOut,
  nullableMoney,
  nullableMoneyOut,
  nullableText,
  text,
} from "../../http/schemas";
import { changedColumns, sendsAnyOf } from "../changes";

/** Highest `stock` accepted: far above any real stock, and always a safe integer. */
const MAX_STOCK = 1_000_000_000;

/** A product as stored (snake_case columns, minor units, epoch ms, 0/1). */
export interface ProductRow {
  id: number;
  name: string;
  sku: string | null;
  internal_sku: string | null;
  price: number;
  sale_price: number | null;
  stock: number | null;
  visible: number;
  description: string | null;
  vat_free: number;
  unit_name: string | null;
  created_at: number;
  updated_at: number;
}

export const PRODUCT_COLUMNS =
  "id, name, sku, internal_sku, price, sale_price, stock, visible, description, vat_free, unit_name, created_at, updated_at";

/** Field pieces shared by create, update, batch items and fixture records. */
const name = () =>
  v.pipe(text(100), v.minLength(1, "must not be empty."), v.metadata({ minLength: 1 }));
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
  name: v.optional(name()),
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
  name: name(),
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

export function toProduct(row: ProductRow): Product {
  return {
    id: row.id,
    name: row.name,
    sku: row.sku,
    internalSku: row.internal_sku,
    price: fromMinor(row.price),
    salePrice: fromMinorOrNull(row.sale_price),
    stock: row.stock,
    visible: row.visible === 1,
    description: row.description,
    vatFree: row.vat_free === 1,
    unitName: row.unit_name,
    createdAt: formatIsrael(row.created_at),
    updatedAt: formatIsrael(row.updated_at),
  };
}

/** API field → column, for the fields a client may set. */
const COLUMN_OF: Record<keyof ProductChanges, keyof ProductRow> = {
  name: "name",
  sku: "sku",
  internalSku: "internal_sku",
  price: "price",
  salePrice: "sale_price",
  stock: "stock",
  visible: "visible",
  description: "description",
  vatFree: "vat_free",
  unitName: "unit_name",
};

/**
 * Applies the sent fields to a row; returns the new row and whether anything really
 * changed (a field sent with its present value is not a change).
 */
export function applyChanges(
  row: ProductRow,
  changes: ProductChanges,
): { row: ProductRow; changed: boolean } {
  const changed = changedColumns(row, changes, COLUMN_OF);
  return { row: { ...row, ...changed }, changed: Object.keys(changed).length > 0 };
}

export const hasChanges = (changes: ProductChanges) => sendsAnyOf(changes, COLUMN_OF);
