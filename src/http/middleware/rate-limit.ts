import type { MiddlewareHandler } from "hono";
import { storeIncarnation } from "../../db/platform";
import { ApiError } from "../../errors";
import type { AppContext, AppEnv } from "../context";
import type { RateLimiter } from "../rate-limit";

/**
 * Counts every authenticated answer against the key's minute and sets the RateLimit
 * headers (prepared before the answer is built; app.onError keeps them on errors).
 */
export function rateLimit(
  limiter: RateLimiter,
  now: () => number,
  bucketOf: (c: AppContext) => string = (c) =>
    `${storeIncarnation(c.get("store"))}:${c.get("key").id}`,
): MiddlewareHandler<AppEnv> {
  return function rateLimitMiddleware(c, next) {
    const decision = limiter.take(bucketOf(c), now());
    const headers = {
      "RateLimit-Limit": String(decision.limit),
      "RateLimit-Remaining": String(decision.remaining),
      "RateLimit-Reset": String(decision.reset),
    };
    if (!decision.allowed) {
      throw new ApiError(
        "rate_limited",
        `This key has used its ${decision.limit} requests for this minute; retry in ${decision.reset} seconds.`,
        {},
        { ...headers, "Retry-After": String(decision.reset) },
      );
    }
    c.header("RateLimit-Limit", headers["RateLimit-Limit"]);
    c.header("RateLimit-Remaining", headers["RateLimit-Remaining"]);
    c.header("RateLimit-Reset", headers["RateLimit-Reset"]);
    return next();
  };
}
