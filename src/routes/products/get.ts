import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { defineRoute } from "../define";
import { getProduct, toProduct } from "./row";
import { productOut } from "./schema";

export const getProductRoute = defineRoute({
  method: "GET",
  path: "/products/:id",
  area: "products",
  summary: "Get one product.",
  params: idParams,
  response: productOut,
  async handler(c, { params }) {
    return ok(c, toProduct(await getProduct(c.get("db"), params.id)));
  },
});
