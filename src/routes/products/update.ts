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
      const current = await getProduct(tx, params.id);
      const { row, changed } = applyChanges(current, body);
      if (!changed) return current;
      await assertInternalSkuFree(tx, body.internalSku, current.id);
      row.updated_at = await changeStamp(tx, c.get("deps").now());
      await saveProduct(tx, row);
      return row;
    });
    return ok(c, toProduct(product));
  },
});
