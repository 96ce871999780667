import { isStoreUnusable } from "../../db/driver";
import type { Store } from "../../db/platform";
import type { AppContext } from "../../http/context";
import { readOrderStatuses } from "../../stores/order-statuses";
import { toStoreJson } from "./schema";

/** A store as the management API shows it (its order statuses read from its database). */
export async function storeJson(c: AppContext, store: Store) {
  const { pool, registry } = c.get("deps");
  const statuses = await pool.use(store.slug, readOrderStatuses);
  return toStoreJson(store, registry.platformDomain, statuses);
}

/**
 * `storeJson`, or with no order statuses when the store's own database cannot be read
 * (missing, damaged): such a store can still be listed and deleted.
 */
export const storeJsonEvenUnusable = (c: AppContext, store: Store) =>
  unlessUnusable(storeJson(c, store), () =>
    toStoreJson(store, c.get("deps").registry.platformDomain, []),
  );

/** `work`'s result, or `fallback()`'s when the store's own database cannot be used. */
export async function unlessUnusable<T>(work: Promise<T>, fallback: () => T): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!isStoreUnusable(error)) throw error;
    return fallback();
  }
}
