import type * as v from "valibot";
import type { Queryable } from "../../db/driver";
import { ApiError } from "../../errors";
import { type Plan, PRODUCT_LIMIT } from "../../plans";
import { defineRoute } from "../define";
import { assertInternalSkuFree, changeStamp, getProduct, PRODUCT_COLUMNS, toProduct } from "./row";
import { createBody, productOut } from "./schema";

type NewProduct = v.InferOutput<typeof createBody>;

/** 409 when the store already holds as many products as its plan allows (counted in the create's transaction). */
async function assertBelowPlanLimit(tx: Queryable, plan: Plan): Promise<void> {
  const limit = PRODUCT_LIMIT[plan];
  if (limit === null) return;
  const count = (await tx.get<{ n: number }>("SELECT COUNT(*) AS n FROM products"))?.n ?? 0;
  if (count >= limit) {
    throw new ApiError(
      "plan_limit",
      `The ${plan} plan allows at most ${limit.toLocaleString("en-US")} products; upgrade the store's plan to add more.`,
    );
  }
}

/** `updatedAt` is the change stamp (never before the store's newest); `createdAt` is the clock's now. */
async function insertProduct(
  tx: Queryable,
  input: NewProduct,
  createdAt: number,
  updatedAt: number,
): Promise<number> {
  const result = await tx.run(
    `INSERT INTO products (${PRODUCT_COLUMNS}) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      input.name,
      input.sku ?? null,
      input.internalSku ?? null,
      input.price,
      input.salePrice ?? null,
      input.stock ?? null,
      Number(input.visible ?? true),
      input.description ?? null,
      Number(input.vatFree ?? false),
      input.unitName ?? null,
      createdAt,
      updatedAt,
    ],
  );
  return result.lastInsertRowid;
}

export const createProduct = defineRoute({
  method: "POST",
  path: "/products",
  area: "products",
  summary: "Create a product (`name` and `price` required). Accepts `Idempotency-Key`.",
  body: createBody,
  response: productOut,
  errors: ["plan_limit"],
  async create(c, { body }, tx) {
    await assertInternalSkuFree(tx, body.internalSku, null);
    await assertBelowPlanLimit(tx, c.get("store").plan);
    const now = c.get("deps").now();
    const id = await insertProduct(tx, body, now, await changeStamp(tx, now));
    return { status: 201, data: toProduct(await getProduct(tx, id)) };
  },
});
