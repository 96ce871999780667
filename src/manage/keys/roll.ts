import { ApiError, notFound } from "../../errors";
import { ok } from "../../http/respond";
import {
  expiryAt,
  KeyInactiveError,
  KeyLimitError,
  KeyNotFoundError,
  listKeys,
  rollKey,
} from "../../keys/repository";
import { storeOr404 } from "../context";
import { defineManageRoute } from "../define";
import { slugIdParams } from "../stores/schema";
import { byHost, changeKeys } from "./change";
import { GRACE_MS, rolledKeyOut, rollKeyBody, toKeyJson } from "./schema";

export const rollStoreKey = defineManageRoute({
  method: "POST",
  path: "/stores/:slug/keys/:id/roll",
  summary:
    "Replace a key: a new one with the same name and permissions; the old one works until the grace ends.",
  params: slugIdParams,
  body: rollKeyBody,
  response: rolledKeyOut,
  status: 201,
  errors: ["key_inactive"],
  handler: async (c, { params, body }) => {
    const store = storeOr404(c, params.slug);
    const { pool, now } = c.get("deps");
    const at = now();
    const rolled = await changeKeys(c, store.slug, (db) =>
      rollKey(
        db,
        store,
        params.id,
        GRACE_MS[body.grace],
        expiryAt(body.expires, at),
        byHost(c),
        at,
      ),
    ).catch((error) => {
      if (error instanceof KeyNotFoundError)
        throw notFound(`API key ${params.id} of store "${store.slug}"`);
      if (error instanceof KeyInactiveError) throw new ApiError("key_inactive", error.message);
      if (error instanceof KeyLimitError) throw new ApiError("plan_limit", error.message);
      throw error;
    });
    const key = (await pool.use(store.slug, listKeys)).find((k) => k.id === rolled.created.id);
    if (!key) throw new Error(`key ${rolled.created.id} vanished right after it was created`);
    return ok(c, { ...toKeyJson(key, at), key: rolled.created.secret }, 201);
  },
});
