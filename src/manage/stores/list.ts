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
 * cursor keeps the last store's `createdAt` and slug, and the next page starts after that
 * position, so stores deleted or made meanwhile shift nothing (stores a load made share
 * one millisecond).
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
      const after = decodeCursor(cursorSecret, SCOPE, query.cursor, "string");
      stores = stores.filter(
        (s) => s.createdAt < after.sort || (s.createdAt === after.sort && s.slug < after.id),
      );
    }
    const page = stores.slice(0, query.limit);
    const hasMore = stores.length > query.limit;
    const last = page.at(-1);
    const nextCursor =
      hasMore && last
        ? encodeCursor(cursorSecret, SCOPE, { sort: last.createdAt, id: last.slug })
        : null;
    const data = await Promise.all(page.map((store) => storeJsonEvenUnusable(c, store)));
    return okList(c, { data, hasMore, nextCursor });
  },
});
