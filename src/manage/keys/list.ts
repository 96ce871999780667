import * as v from "valibot";
import { ok } from "../../http/respond";
import { storeOr404 } from "../context";
import { defineManageRoute } from "../define";
import { slugParams } from "../stores/schema";
import { keyOut, toKeyJson } from "./schema";

const STATUS_ORDER = { active: 0, expired: 1, deleted: 2 };

export const listStoreKeys = defineManageRoute({
  method: "GET",
  path: "/stores/:slug/keys",
  summary: "All of a store's API keys, active first (not paginated: at most 5 are active).",
  params: slugParams,
  response: v.array(keyOut),
  handler: async (c, { params }) => {
    const store = storeOr404(c, params.slug);
    const { pool, usage, now } = c.get("deps");
    const at = now();
    const keys = (await pool.use(store.slug, (db) => usage.listKeys(db, store))).map((key) =>
      toKeyJson(key, at),
    );
    keys.sort((a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status] || a.id - b.id);
    return ok(c, keys);
  },
});
