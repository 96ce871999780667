import { notFound } from "../../errors";
import { ok } from "../../http/respond";
import { deleteKey, KeyNotFoundError } from "../../keys/repository";
import { storeOr404 } from "../context";
import { defineManageRoute } from "../define";
import { slugIdParams } from "../stores/schema";
import { byHost, changeKeys } from "./change";
import { keyOut, toKeyJson } from "./schema";

export const deleteStoreKey = defineManageRoute({
  method: "DELETE",
  path: "/stores/:slug/keys/:id",
  summary: "Delete a store's API key (401 on the store API at once); the owner is emailed.",
  params: slugIdParams,
  response: keyOut,
  handler: async (c, { params }) => {
    const store = storeOr404(c, params.slug);
    const { now, usage } = c.get("deps");
    const at = now();
    const key = await changeKeys(c, store.slug, (db) =>
      deleteKey(db, store, params.id, byHost(c), at),
    ).catch((error) => {
      if (error instanceof KeyNotFoundError)
        throw notFound(`API key ${params.id} of store "${store.slug}"`);
      throw error;
    });
    // Its last use may be known only to platform.db (key_usage), as a list shows it.
    const [used] = await usage.withLastUse([key], store);
    return ok(c, toKeyJson({ ...(used ?? key), deletedAt: at }, at));
  },
});
