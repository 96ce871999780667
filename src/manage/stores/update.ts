import { ok } from "../../http/respond";
import { nothingToUpdate } from "../../http/validate";
import { manageDeps, reloadRegistry, storeOr404 } from "../context";
import { defineManageRoute } from "../define";
import { storeJsonEvenUnusable } from "./json";
import { replaceStatuses } from "./order-statuses";
import { refuseTakenDomain, slugParams, storeOut, updateStoreBody } from "./schema";

export const updateStore = defineManageRoute({
  method: "PATCH",
  path: "/stores/:slug",
  summary:
    "Change a store's name, domain, plan, owner email, settings (settings merge) or order statuses (replaced, as by PUT …/order-statuses).",
  params: slugParams,
  body: updateStoreBody,
  response: storeOut,
  errors: ["domain_taken", "status_in_use"],
  handler: async (c, { params, body }) => {
    const { settings, orderStatuses, ...fields } = body;
    // `{"settings": {}}` changes nothing either.
    if (
      Object.keys(fields).length === 0 &&
      Object.keys(settings ?? {}).length === 0 &&
      orderStatuses === undefined
    )
      throw nothingToUpdate();
    const store = storeOr404(c, params.slug);
    const { registry, pool } = c.get("deps");
    const { platform } = manageDeps(c);
    const { domain } = body;
    const refuseTaken = async () => {
      if (domain !== undefined) await refuseTakenDomain(registry, platform, domain, store.slug);
    };
    await refuseTaken();
    // In the store's own database, before the registry: a 409 there leaves everything as
    // it was, and a registry write that fails puts the old set back.
    const replaced = orderStatuses && (await replaceStatuses(pool, store.slug, orderStatuses));
    await platform.changeStore(store.slug, { ...fields, settings }).catch(async (error) => {
      if (replaced) await replaceStatuses(pool, store.slug, replaced.before).catch(() => {});
      // `stores set` may have given the domain to another store since the check.
      await refuseTaken();
      throw error;
    });
    await reloadRegistry(c);
    // Saved: a store whose own database cannot be read is shown without its statuses.
    return ok(c, await storeJsonEvenUnusable(c, storeOr404(c, store.slug)));
  },
});
