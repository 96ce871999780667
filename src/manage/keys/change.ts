import type { Db } from "../../db/driver";
import type { AppContext } from "../../http/context";

/** Who changed a key, for the owner's email. */
export const byHost = (c: AppContext) =>
  `the host's platform (management API key "${c.get("hostKey").name}")`;

/** Runs `change` on the store's database as a change of its keys (see `AppDeps.changeKeys`). */
export function changeKeys<T>(c: AppContext, slug: string, change: (db: Db) => Promise<T>) {
  const deps = c.get("deps");
  return deps.changeKeys(slug, () => deps.pool.use(slug, change));
}
