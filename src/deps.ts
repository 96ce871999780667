import type { AppDeps } from "./app";
import type { Platform } from "./db/platform";
import type { StorePool } from "./db/pool";
import { AuthFailures, DEFAULT_FAILURE_POLICY } from "./http/auth-failures";
import { KeyedQueue } from "./http/idempotency";
import { RateLimiter } from "./http/rate-limit";
import { KeyCache } from "./keys/cache";
import { KeyUsage } from "./keys/usage";
import { type ReportError, reportToStderr } from "./log";
import type { StoreRegistry } from "./registry";

/** What `buildDeps` makes itself: the request path's own state over the store pool. */
type Built = "keys" | "usage" | "rateLimiter" | "authFailures" | "idempotencyQueue" | "changeKeys";

export type DepsParts = Omit<AppDeps, Built> & {
  pool: StorePool;
  /** Where key uses are recorded. */
  platform: Platform;
  /** Requests per key per clock minute (`--rate-limit`). */
  rateLimit: number;
  /** Failed keys from one address before it is blocked (`--auth-failure-limit`). */
  authFailureLimit: number;
  /** Made by the caller when something else reads it too (metrics). */
  authFailures?: AuthFailures;
  reportError?: ReportError;
};

/** The app's dependencies: one wiring for `serve` and for the tests that build the app in process. */
export function buildDeps({
  rateLimit,
  authFailureLimit,
  authFailures,
  reportError,
  platform,
  ...parts
}: DepsParts): AppDeps {
  const keys = new KeyCache(parts.pool);
  return {
    ...parts,
    keys,
    changeKeys: keyChanges(
      platform,
      parts.registry,
      keys,
      parts.beforeMailQueued,
      reportError ?? reportToStderr,
    ),
    usage: new KeyUsage(platform, reportError),
    rateLimiter: new RateLimiter(rateLimit),
    authFailures:
      authFailures ?? new AuthFailures({ ...DEFAULT_FAILURE_POLICY, limit: authFailureLimit }),
    idempotencyQueue: new KeyedQueue(),
  };
}

/**
 * Makes a change of a store's keys between two bumps of its key version in platform.db
 * (see `AppDeps.changeKeys`), the store marked first for the owner's notice it queues
 * (`beforeMailQueued`: a start after a crash looks at its outbox). Once the change is made
 * it holds: this server forgets the store's keys whatever the second bump does, and a bump
 * refused then (platform.db locked since the first) is logged, not answered; other
 * processes see the change at the store's next one.
 */
export function keyChanges(
  platform: Platform,
  registry: StoreRegistry,
  keys: KeyCache,
  beforeMailQueued: AppDeps["beforeMailQueued"],
  reportError: ReportError,
): AppDeps["changeKeys"] {
  return async (slug, change) => {
    await beforeMailQueued(slug);
    // A change refused after this (404, plan_limit) has cost one reload of the store's keys.
    await platform.bumpKeysAndMail(slug);
    const changed = await change();
    try {
      await platform.bumpKeysAndMail(slug);
    } catch (error) {
      reportError(
        `the keys of store "${slug}" changed, but platform.db could not record it; other processes see the change at the store's next key change`,
        error,
      );
    } finally {
      keys.forget(slug);
      await registry.load();
    }
    return changed;
  };
}
