import type { AppDeps } from "./app";
import type { Platform } from "./db/platform";
import type { StorePool } from "./db/pool";
import { AuthFailures, DEFAULT_FAILURE_POLICY } from "./http/auth-failures";
import { KeyedQueue } from "./http/idempotency";
import { RateLimiter } from "./http/rate-limit";
import { KeyCache } from "./keys/cache";
import { KeyUsage } from "./keys/usage";
import type { ReportError } from "./log";

/** What `buildDeps` makes itself: the request path's own state over the store pool. */
type Built = "keys" | "usage" | "rateLimiter" | "authFailures" | "idempotencyQueue";

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
  return {
    ...parts,
    keys: new KeyCache(parts.pool),
    usage: new KeyUsage(platform, reportError),
    rateLimiter: new RateLimiter(rateLimit),
    authFailures:
      authFailures ?? new AuthFailures({ ...DEFAULT_FAILURE_POLICY, limit: authFailureLimit }),
    idempotencyQueue: new KeyedQueue(),
  };
}
