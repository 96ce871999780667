import type { MiddlewareHandler, Next } from "hono";
import type { Lease, StorePool } from "../../db/pool";
import { ApiError } from "../../errors";
import type { StoreRegistry } from "../../registry";
import type { AppContext, AppEnv } from "../context";

const unknownHost = () =>
  new ApiError("not_found", "No store is served at this host name; check the domain in the URL.");

/**
 * A character that ends a URL's host, in the `Host` header. Deno builds the request's URL
 * from `Host` and the request line, so `Host: x/manage/v1/stores#` made a request for
 * `/api/v1/orders` one for `/manage/v1/stores`. No store's host has one, so the store API
 * and the admin screen answer such a request as an unknown host anyway.
 */
const NOT_IN_A_HOST = /[/?#@\\]/;

/** Answers a `Host` that is no host name at all as an unknown host (the management API's check). */
export const refuseMalformedHost: MiddlewareHandler<AppEnv> = (c, next) => {
  if (NOT_IN_A_HOST.test(c.req.header("host") ?? "")) throw unknownHost();
  return next();
};

/** Picks the store by `Host` and leases its database for the request. */
export function storeByHost(registry: StoreRegistry, pool: StorePool): MiddlewareHandler<AppEnv> {
  return function storeByHostMiddleware(c, next) {
    const store = registry.resolveHost(c.req.header("host"));
    if (!store) throw unknownHost();
    c.set("store", store);
    // An open database is leased without waiting; only a store's first request waits for it.
    const lease = pool.leaseOpen(store.slug);
    return lease
      ? withLease(c, lease, next)
      : pool
          .acquire(store.slug, { hungUp: c.env?.hungUp })
          .then((opened) => withLease(c, opened, next));
  };
}

async function withLease(c: AppContext, lease: Lease, next: Next): Promise<void> {
  c.set("db", lease.db.requestView ?? lease.db);
  try {
    await next();
  } finally {
    lease.release();
  }
}
