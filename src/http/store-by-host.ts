import type { MiddlewareHandler } from "hono";
import type { StorePool } from "../db/pool";
import { ApiError } from "../errors";
import type { StoreRegistry } from "../registry";
import type { AppEnv } from "./context";

/** Picks the store by `Host` and leases its database for the request. */
export function storeByHost(registry: StoreRegistry, pool: StorePool): MiddlewareHandler<AppEnv> {
  return async function storeByHostMiddleware(c, next) {
    const store = registry.resolveHost(c.req.header("host"));
    if (!store) throw new ApiError("not_found", "No store is served at this host name; check the domain in the URL.");
    c.set("store", store);
    const lease = await pool.acquire(store.slug);
    c.set("db", lease.db);
    try {
      await next();
    } finally {
      lease.release();
    }
  };
}
