import * as v from "valibot";
import type { Store } from "../../db/platform";
import { decodeCursor, encodeCursor } from "../../http/cursor";
import { okList } from "../../http/respond";
import { cursorParam, limitParam } from "../../http/schemas";
import { defineManageRoute } from "../define";
import { storeJsonEvenUnusable } from "./json";
import { storeOut } from "./schema";

const SCOPE = { list: "stores", store: "", filters: "" };

/** Newest first: `createdAt`, then `slug`, descending. */
const newestFirst = (a: Store, b: Store) =>
  b.createdAt - a.createdAt || (a.slug < b.slug ? 1 : a.slug > b.slug ? -1 : 0);

/**
 * The registry holds every store in memory, so a page is a slice of its sorted list. The
 * cursor keeps the last store's `createdAt` and its rank among stores made in the same
 * millisecond; a deleted store before it shifts that rank by one, which can repeat a row,
 * never skip one.
 */
export const listStores = defineManageRoute({
  method: "GET",
  path: "/stores",
  summary: "List stores, newest first.",
  query: v.strictObject({ limit: limitParam(), cursor: cursorParam() }),
  response: v.array(storeOut),
  list: true,
  handler: async (c, { query }) => {
    const { registry, cursorSecret } = c.get("deps");
    let stores = registry.all().sort(newestFirst);
    if (query.cursor !== undefined) {
      const after = decodeCursor(cursorSecret, SCOPE, query.cursor);
      const sameMs = stores.filter((s) => s.createdAt === after.sort);
      stores = stores.filter((s) => s.createdAt < after.sort);
      stores = [...sameMs.slice(after.id), ...stores];
    }
    const page = stores.slice(0, query.limit);
    const hasMore = stores.length > query.limit;
    const last = page.at(-1);
    const rank = (store: Store) =>
      registry.all().filter((s) => s.createdAt === store.createdAt && s.slug >= store.slug).length;
    const nextCursor =
      hasMore && last
        ? encodeCursor(cursorSecret, SCOPE, { sort: last.createdAt, id: rank(last) })
        : null;
    const data = await Promise.all(page.map((store) => storeJsonEvenUnusable(c, store)));
    return okList(c, { data, hasMore, nextCursor });
  },
});
