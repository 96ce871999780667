import type { Store } from "../../db/platform";
import type { AppContext } from "../../http/context";
import { readOrderStatuses, toStoreJson } from "./schema";

/** A store as the management API shows it (its order statuses read from its database). */
export async function storeJson(c: AppContext, store: Store) {
  const { pool, registry } = c.get("deps");
  const statuses = await pool.use(store.slug, readOrderStatuses);
  return toStoreJson(store, registry.platformDomain, statuses);
}

/** A store whose database cannot be read: as `storeJson`, with no order statuses. */
export function storeJsonWithout(c: AppContext, store: Store) {
  return toStoreJson(store, c.get("deps").registry.platformDomain, []);
}
