import * as v from "valibot";
import { type ListSource, listAnswer } from "../../http/pagination";
import { defineRoute } from "../define";
import { PRODUCT_COLUMNS, type ProductRow, toProduct } from "./row";
import { listQuery, productOut } from "./schema";

const source: ListSource = {
  list: "products",
  table: "products",
  sortColumn: "updated_at",
  columns: PRODUCT_COLUMNS,
  since: "updated_since",
};

export const listProducts = defineRoute({
  method: "GET",
  path: "/products",
  area: "products",
  summary: "List products, most recently updated first; `updated_since` (inclusive) for sync.",
  query: listQuery,
  response: v.array(productOut),
  list: true,
  handler: (c, { query }) => listAnswer<ProductRow>(c, source, query, toProduct),
});
