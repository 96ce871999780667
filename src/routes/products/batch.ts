import * as v from "valibot";
import type { Queryable } from "../../db/driver";
import { ApiError, type ErrorCode, invalidField, notFound } from "../../errors";
import { MAX_BODY_BYTES } from "../../http/json-body";
import { ok } from "../../http/respond";
import { documentedAs, idOut, positiveInteger, text } from "../../http/schemas";
import { parseBody } from "../../http/validate";
import { defineRoute } from "../define";
import {
  applyChanges,
  changeStamp,
  hasChanges,
  PRODUCT_COLUMNS,
  type ProductRow,
  saveProduct,
} from "./row";
import { type ProductChanges, productFields } from "./schema";

const MAX_BATCH_ITEMS = 500;

const identifier = () => v.pipe(text(64), v.minLength(1, "must not be empty."));
const IDENTIFIERS = ["id", "internalSku", "sku"] as const;
type Identifier = (typeof IDENTIFIERS)[number];

/** `sku` and `internalSku` name the product in an item, so a batch cannot change them (PATCH can). */
const { sku: _sku, internalSku: _internalSku, ...changeFields } = productFields;

const batchItem = v.strictObject({
  id: v.optional(positiveInteger()),
  internalSku: v.optional(identifier()),
  sku: v.optional(identifier()),
  ...changeFields,
});

/** How the document shows an item: named by exactly one identifier, plus fields to change. */
const documentedItem = v.union([
  v.strictObject({ id: positiveInteger(), ...changeFields }),
  v.strictObject({ internalSku: identifier(), ...changeFields }),
  v.strictObject({ sku: identifier(), ...changeFields }),
]);

/** Only the envelope is checked up front: a bad item fails on its own, not the batch. */
const batchBody = v.strictObject({
  items: v.pipe(
    v.array(v.unknown(), "must be an array of items."),
    v.minLength(1, `must hold 1 to ${MAX_BATCH_ITEMS} items.`),
    v.maxLength(MAX_BATCH_ITEMS, `must hold 1 to ${MAX_BATCH_ITEMS} items.`),
    documentedAs<unknown[]>(
      v.pipe(v.array(documentedItem), v.minLength(1), v.maxLength(MAX_BATCH_ITEMS)),
    ),
    v.metadata({
      description:
        `1 to ${MAX_BATCH_ITEMS} objects, each naming its product by exactly one of \`id\`, \`internalSku\`, \`sku\`, plus fields to change: ` +
        "`name`, `price`, `salePrice`, `stock`, `visible`, `description`, `vatFree`, `unitName`.",
    }),
  ),
});

/** The codes an item can fail with (the batch itself answers the rest). */
const ITEM_ERROR_CODES = [
  "invalid_field",
  "nothing_to_update",
  "not_found",
] as const satisfies readonly ErrorCode[];

const itemError = v.object({ code: v.picklist(ITEM_ERROR_CODES), message: v.string() });

const batchResult = v.object({
  updated: v.pipe(v.number(), v.integer()),
  failed: v.pipe(v.number(), v.integer()),
  results: v.array(
    v.union([
      v.object({ index: v.pipe(v.number(), v.integer()), ok: v.literal(true), id: idOut() }),
      v.object({ index: v.pipe(v.number(), v.integer()), ok: v.literal(false), error: itemError }),
    ]),
  ),
});

type Result =
  | { index: number; ok: true; id: number }
  | { index: number; ok: false; error: { code: ErrorCode; message: string } };

interface ParsedItem {
  index: number;
  by: Identifier;
  name: number | string;
  changes: ProductChanges;
}

const failure = (index: number, error: ApiError): Result => ({
  index,
  ok: false,
  error: { code: error.code, message: error.message },
});

/** Checks one item alone: an object, exactly one identifier, valid fields, something to change. */
function parseItem(raw: unknown, index: number): ParsedItem | Result {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return failure(index, invalidField(`items[${index}]`, "Each item must be a JSON object."));
  }
  const named = IDENTIFIERS.filter((key) => (raw as Record<string, unknown>)[key] !== undefined);
  if (named.length !== 1) {
    return failure(
      index,
      invalidField(
        `items[${index}]`,
        'Name the product by exactly one of "id", "internalSku" or "sku".',
      ),
    );
  }
  try {
    const { id, internalSku, sku, ...changes } = parseBody(batchItem, raw);
    if (!hasChanges(changes)) {
      throw new ApiError(
        "nothing_to_update",
        "The item changes nothing; send at least one field to change beside its id, internalSku or sku.",
      );
    }
    const by = named[0];
    return {
      index,
      by,
      name: (by === "id" ? id : by === "sku" ? sku : internalSku) as number | string,
      changes,
    };
  } catch (error) {
    if (error instanceof ApiError) return failure(index, error);
    throw error;
  }
}

const IN_LIST = "IN (SELECT value FROM json_each(?))";

/**
 * The products the items name, as they are when the batch starts: three statements
 * whatever the batch size, and never more rows than items (a sku shared by thousands of
 * products is counted, not loaded).
 */
async function loadNamed(tx: Queryable, items: ParsedItem[]) {
  const values = (by: Identifier) => [
    ...new Set(items.filter((i) => i.by === by).map((i) => i.name)),
  ];
  const internalSkus = values("internalSku");
  const skus = values("sku");
  const byInternalSku = new Map<string, number>();
  const bySku = new Map<string, { n: number; id: number }>();
  if (internalSkus.length) {
    const found = await tx.all<{ id: number; internal_sku: string }>(
      `SELECT id, internal_sku FROM products WHERE internal_sku ${IN_LIST}`,
      [JSON.stringify(internalSkus)],
    );
    for (const row of found) byInternalSku.set(row.internal_sku, row.id);
  }
  if (skus.length) {
    const found = await tx.all<{ sku: string; n: number; id: number }>(
      `SELECT sku, COUNT(*) AS n, MIN(id) AS id FROM products WHERE sku ${IN_LIST} GROUP BY sku`,
      [JSON.stringify(skus)],
    );
    for (const row of found) bySku.set(row.sku, { n: row.n, id: row.id });
  }
  const ids = new Set([
    ...values("id"),
    ...byInternalSku.values(),
    ...[...bySku.values()].filter((s) => s.n === 1).map((s) => s.id),
  ]);
  const rows = new Map<number, ProductRow>();
  if (ids.size) {
    const found = await tx.all<ProductRow>(
      `SELECT ${PRODUCT_COLUMNS} FROM products WHERE id ${IN_LIST}`,
      [JSON.stringify([...ids])],
    );
    for (const row of found) rows.set(row.id, row);
  }
  return { rows, byInternalSku, bySku };
}

type Named = Awaited<ReturnType<typeof loadNamed>>;

function resolve(item: ParsedItem, named: Named): number {
  if (item.by === "id") {
    if (named.rows.has(item.name as number)) return item.name as number;
    throw notFound(`Product ${item.name}`);
  }
  if (item.by === "internalSku") {
    const id = named.byInternalSku.get(item.name as string);
    if (id !== undefined) return id;
    throw new ApiError("not_found", `No product has internalSku "${item.name}".`);
  }
  const match = named.bySku.get(item.name as string);
  if (!match) throw new ApiError("not_found", `No product has sku "${item.name}".`);
  if (match.n > 1) {
    throw invalidField(
      "sku",
      `sku "${item.name}" matches ${match.n} products; name the product by id or internalSku instead.`,
    );
  }
  return match.id;
}

/**
 * Applies the valid items in order inside one transaction. Items name products as they
 * were when the batch started; two items on one product both apply, the later winning
 * per field. Products that really change share one `updatedAt`.
 */
async function applyBatch(tx: Queryable, items: ParsedItem[], now: number): Promise<Result[]> {
  const named = await loadNamed(tx, items);
  const changed = new Set<number>();
  const results = items.map((item): Result => {
    try {
      const id = resolve(item, named);
      const current = named.rows.get(id) as ProductRow;
      const next = applyChanges(current, item.changes);
      if (next.changed) {
        named.rows.set(id, next.row);
        changed.add(id);
      }
      return { index: item.index, ok: true, id };
    } catch (error) {
      if (error instanceof ApiError) return failure(item.index, error);
      throw error;
    }
  });
  if (changed.size > 0) {
    const stamp = await changeStamp(tx, now);
    // One prepared statement, reused for every row (values bound, never spliced into SQL or JSON).
    for (const id of changed)
      await saveProduct(tx, { ...(named.rows.get(id) as ProductRow), updated_at: stamp });
  }
  return results;
}

export const batchUpdateProducts = defineRoute({
  method: "POST",
  path: "/products/batch",
  area: "products",
  summary: `Update up to ${MAX_BATCH_ITEMS} products in one transaction; each item succeeds or fails on its own.`,
  body: batchBody,
  response: batchResult,
  maxBodyBytes: MAX_BODY_BYTES,
  async handler(c, { body }) {
    const parsed = body.items.map(parseItem);
    const valid = parsed.filter((p): p is ParsedItem => "by" in p);
    const applied = valid.length
      ? await c.get("db").transaction((tx) => applyBatch(tx, valid, c.get("deps").now()))
      : [];
    const results = [...parsed.filter((p): p is Result => "ok" in p), ...applied].sort(
      (a, b) => a.index - b.index,
    );
    const updated = results.filter((r) => r.ok).length;
    return ok(c, { updated, failed: results.length - updated, results });
  },
});
