import type { Queryable } from "../../db/driver";
import { invalidField, notFound } from "../../errors";
import { fromMinor, fromMinorOrNull } from "../../format/money";
import { formatIsrael } from "../../format/time";
import { changedColumns, sendsAnyOf } from "../changes";
import type { Product, ProductChanges } from "./schema";

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

/** One product row of this store, or 404 `not_found`. */
export async function getProduct(db: Queryable, id: number): Promise<ProductRow> {
  const row = await db.get<ProductRow>(`SELECT ${PRODUCT_COLUMNS} FROM products WHERE id = ?`, [
    id,
  ]);
  if (!row) throw notFound(`Product ${id}`);
  return row;
}

/** 400 when another product of the store already has this internalSku (it is unique). */
export async function assertInternalSkuFree(
  db: Queryable,
  internalSku: string | null | undefined,
  ownId: number | null,
): Promise<void> {
  if (internalSku === null || internalSku === undefined) return;
  const owner = await db.get<{ id: number }>("SELECT id FROM products WHERE internal_sku = ?", [
    internalSku,
  ]);
  if (owner && owner.id !== ownId) {
    throw invalidField(
      "internalSku",
      `Field "internalSku" must be unique in the store; product ${owner.id} already uses "${internalSku}".`,
    );
  }
}

/** Writes every column of a product row back (one statement, prepared once). */
export async function saveProduct(db: Queryable, row: ProductRow): Promise<void> {
  await db.run(
    `UPDATE products SET name = ?, sku = ?, internal_sku = ?, price = ?, sale_price = ?, stock = ?, visible = ?,
       description = ?, vat_free = ?, unit_name = ?, updated_at = ? WHERE id = ?`,
    [
      row.name,
      row.sku,
      row.internal_sku,
      row.price,
      row.sale_price,
      row.stock,
      row.visible,
      row.description,
      row.vat_free,
      row.unit_name,
      row.updated_at,
      row.id,
    ],
  );
}

/**
 * The `updatedAt` for a change made in this write transaction: now, but never before the
 * newest `updatedAt` already in the store (a clock step back, or future-dated fixture
 * rows). Writes are serialised, so stamps follow commit order and a sync client's
 * high-water mark never passes a change it has not seen. One index lookup.
 */
export async function changeStamp(tx: Queryable, now: number): Promise<number> {
  const newest =
    (await tx.get<{ t: number | null }>("SELECT MAX(updated_at) AS t FROM products"))?.t ?? null;
  return newest === null ? now : Math.max(now, newest);
}
