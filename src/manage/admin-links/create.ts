import * as v from "valibot";
import { createSignInLink } from "../../admin/links";
import { formatIsrael } from "../../format/time";
import { optionalJsonBody } from "../../http/json-body";
import { ok } from "../../http/respond";
import { dateTimeOut } from "../../http/schemas";
import { storeOr404 } from "../context";
import { defineManageRoute } from "../define";
import { slugParams } from "../stores/schema";
import { originSchema } from "./schema";

export const createAdminLinkRoute = defineManageRoute({
  method: "POST",
  path: "/stores/:slug/admin-links",
  summary: "A one-time, 15-minute sign-in link to the store admin's API keys screen.",
  params: slugParams,
  body: v.strictObject({ origin: v.optional(originSchema) }),
  readBody: optionalJsonBody,
  response: v.object({ url: v.string(), token: v.string(), expiresAt: dateTimeOut() }),
  status: 201,
  bodyOptional: true,
  handler: async (c, { params, body }) => {
    const store = storeOr404(c, params.slug);
    const origin = body.origin ?? `https://${store.domain}`;
    const now = c.get("deps").now();
    const link = await c
      .get("deps")
      .pool.use(store.slug, (db) => createSignInLink(db, origin, now));
    return ok(
      c,
      { url: link.url, token: link.token, expiresAt: formatIsrael(link.expiresAt) },
      201,
    );
  },
});
