import * as v from "valibot";
import type { Queryable } from "../../db/driver";
import { bool } from "../../http/schemas";
import { type FixtureSection, fixtureDateTime, fixtureId, repeatedId } from "../../load/section";
import { PRODUCT_COLUMNS, type ProductRow } from "./row";
import { productFields } from "./schema";

const nullable = <T>(value: T | undefined) => (value === undefined ? null : value);

/** A fixture product: the API's field names and formats; `id` and timestamps optional. */
const recordSchema = v.pipe(
  v.strictObject({
    ...productFields,
    id: v.optional(fixtureId()),
    name: productFields.name.wrapped,
    price: productFields.price.wrapped,
    visible: v.optional(bool(), true),
    vatFree: v.optional(bool(), false),
    createdAt: v.optional(fixtureDateTime()),
    updatedAt: v.optional(fixtureDateTime()),
  }),
  v.transform((r) => ({
    id: r.id ?? null,
    name: r.name,
    sku: nullable(r.sku),
    internal_sku: nullable(r.internalSku),
    price: r.price,
    sale_price: nullable(r.salePrice),
    stock: nullable(r.stock),
    visible: Number(r.visible),
    description: nullable(r.description),
    vat_free: Number(r.vatFree),
    unit_name: nullable(r.unitName),
    // Filled in by `check` (which knows the load's "now") when the record has none.
    created_at: r.createdAt ?? null,
    updated_at: r.updatedAt ?? null,
  })),
);

type FixtureProduct = Omit<ProductRow, "id" | "created_at" | "updated_at"> & {
  id: number | null;
  created_at: number | null;
  updated_at: number | null;
};

const INSERT = `INSERT INTO products (${PRODUCT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

async function insertProducts(tx: Queryable, rows: FixtureProduct[]): Promise<void> {
  for (const r of rows) {
    await tx.run(INSERT, [
      r.id,
      r.name,
      r.sku,
      r.internal_sku,
      r.price,
      r.sale_price,
      r.stock,
      r.visible,
      r.description,
      r.vat_free,
      r.unit_name,
      r.created_at,
      r.updated_at,
    ]);
  }
}

export const productFixture: FixtureSection<FixtureProduct> = {
  name: "products",
  schema: recordSchema,
  check(row, context, seen) {
    row.created_at ??= context.now;
    // A record never updated since it was made: updatedAt defaults to createdAt.
    row.updated_at ??= row.created_at;
    if (row.updated_at < row.created_at) return ["updatedAt", "must not be before createdAt."];
    const repeated = repeatedId(seen, "product", row.id);
    if (repeated) return repeated;
    if (row.internal_sku !== null) {
      const key = `internalSku:${row.internal_sku}`;
      if (seen.has(key))
        return [
          "internalSku",
          `internalSku "${row.internal_sku}" is also used by another product; it must be unique in the store.`,
        ];
      seen.set(key, true);
    }
    return null;
  },
  insert: insertProducts,
};
