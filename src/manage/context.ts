import type { Store } from "../db/platform";
import { notFound } from "../errors";
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
