import type { Queryable } from "../../db/driver";
import { invalidField, notFound } from "../../errors";
import { PRODUCT_COLUMNS, type ProductRow } from "./schema";

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
