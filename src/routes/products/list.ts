import * as v from "valibot";
import { listPage } from "../../http/pagination";
import { okList } from "../../http/respond";
import { defineRoute } from "../define";
import { listQuery, PRODUCT_COLUMNS, productOut, type ProductRow, toProduct } from "./schema";

export const listProducts = defineRoute({
  method: "GET",
  path: "/products",
  area: "products",
  summary: "List products, most recently updated first; `updated_since` (inclusive) for sync.",
  query: listQuery,
  response: v.array(productOut),
  list: true,
  async handler(c, { query }) {
    const page = await listPage<ProductRow>(
      c,
      { list: "products", table: "products", sortColumn: "updated_at", columns: PRODUCT_COLUMNS },
      { limit: query.limit, cursor: query.cursor, since: query.updated_since, filters: { updated_since: query.updated_since } },
    );
    return okList(c, { ...page, data: page.data.map(toProduct) });
  },
});
