import type * as v from "valibot";
import type { Queryable } from "../../db/driver";
import { ApiError } from "../../errors";
import type { AppContext } from "../../http/context";
import { createKeyIn, expiryAt, KeyLimitError, listKeys } from "../../keys/repository";
import { storeOr404 } from "../context";
import { defineManageRoute } from "../define";
import { slugParams } from "../stores/schema";
import { byHost } from "./change";
import { createdKeyOut, createKeyBody, toKeyJson } from "./schema";

/** A replayed create shows `key: null`: the secret is never stored, not even in an idempotency record. */
const withoutSecret = (data: unknown) => ({ ...(data as object), key: null });

export const createStoreKey = defineManageRoute({
  method: "POST",
  path: "/stores/:slug/keys",
  summary:
    "Create an API key for a store (the full key is in this answer only); the owner is emailed.",
  params: slugParams,
  body: createKeyBody,
  response: createdKeyOut,
  status: 201,
  errors: ["plan_limit"],
  createInStore: (c, { params, body }, tx) => create(c, params.slug, body, tx),
  redact: withoutSecret,
  changesKeys: true,
});

async function create(
  c: AppContext,
  slug: string,
  body: v.InferOutput<typeof createKeyBody>,
  tx: Queryable,
) {
  const store = storeOr404(c, slug);
  const at = c.get("deps").now();
  const input = {
    name: body.name,
    permissions: body.permissions,
    expiresAt: expiryAt(body.expires, at),
  };
  const created = await createKeyIn(tx, store, input, byHost(c), at).catch((error) => {
    if (error instanceof KeyLimitError) throw new ApiError("plan_limit", error.message);
    throw error;
  });
  const key = (await listKeys(tx)).find((k) => k.id === created.id);
  if (!key) throw new Error(`key ${created.id} vanished right after it was created`);
  return { status: 201 as const, data: { ...toKeyJson(key, at), key: created.secret } };
}
