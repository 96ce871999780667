import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { nothingToUpdate } from "../../http/validate";
import { defineRoute } from "../define";
import {
  applyChanges,
  assertInternalSkuFree,
  changeStamp,
  getProduct,
  hasChanges,
  saveProduct,
  toProduct,
} from "./row";
import { productOut, updateBody } from "./schema";

export const updateProduct = defineRoute({
  method: "PATCH",
  path: "/products/:id",
  area: "products",
  summary: "Change the fields sent; `updatedAt` moves only when a value really changes.",
  params: idParams,
  body: updateBody,
  response: productOut,
  errors: ["nothing_to_update"],
  async handler(c, { params, body }) {
    if (!hasChanges(body)) throw nothingToUpdate();
    const product = await c.get("db").transaction(async (tx) => {
      // A clash is a field error (400), answered before a missing product's 404 (contract §2).
      await assertInternalSkuFree(tx, body.internalSku, params.id);
      const current = await getProduct(tx, params.id);
      const { row, changed } = applyChanges(current, body);
      if (!changed) return current;
      row.updated_at = await changeStamp(tx, c.get("deps").now());
      await saveProduct(tx, row);
      return row;
    });
    return ok(c, toProduct(product));
  },
});
