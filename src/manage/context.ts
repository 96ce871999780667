import type { Store } from "../db/platform";
import { ApiError, notFound } from "../errors";
import type { AppContext } from "../http/context";
import type { ManageDeps } from "./app";

/** The management services; mountManage is only called when they exist. */
export function manageDeps(c: AppContext): ManageDeps {
  const manage = c.get("deps").manage;
  if (!manage) throw new Error("the management API is not configured");
  return manage;
}

/** The store a `{slug}` path names; 404 for an unknown (or deleted) one. */
export function storeOr404(c: AppContext, slug: string): Store {
  const store = c.get("deps").registry.get(slug);
  if (!store) throw notFound(`A store with slug "${slug}"`);
  return store;
}

/** After a write through the server's own platform connection (which data_version does not report). */
export const reloadRegistry = (c: AppContext) => c.get("deps").registry.load();

/**
 * How long a create or delete waits, from its arrival, for other changes of stores (a load
 * registering its stores): under Bun's 10 s idle cut of the client's connection.
 */
const STORES_LOCK_WAIT_MS = 8_000;

const storesBusy = () =>
  new ApiError(
    "service_unavailable",
    "Another storeapi process is changing this server's stores (a load registering its stores, say; on a libSQL server, a node that stopped in the middle of such a change holds them for up to a minute); retry in a moment.",
  );

/**
 * Runs a change of a store's files and registration (create, delete) one at a time: in
 * this server, and in a data directory beside the CLI's `stores add` and `load` too.
 */
export function changeStores<T>(c: AppContext, change: () => Promise<T>): Promise<T> {
  const { location } = c.get("deps").pool;
  const giveUpAt = Date.now() + STORES_LOCK_WAIT_MS;
  return manageDeps(c).storeFiles.run("stores", () =>
    location.changeStores(Math.max(0, giveUpAt - Date.now()), storesBusy, change),
  );
}
