import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import type { AppEnv } from "./context";
import type { RateLimiter } from "./rate-limit";

/** Counts every authenticated answer against the key's minute and sets the RateLimit headers. */
export function rateLimit(limiter: RateLimiter, now: () => number): MiddlewareHandler<AppEnv> {
  return async function rateLimitMiddleware(c, next) {
    const decision = limiter.take(`${c.var.store.slug}:${c.var.key.id}`, now());
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
    try {
      await next();
    } finally {
      for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
    }
  };
}
