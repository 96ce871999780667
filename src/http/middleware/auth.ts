import type { MiddlewareHandler } from "hono";
import { ApiError, fixedError } from "../../errors";
import type { KeyCache } from "../../keys/cache";
import { isActive } from "../../keys/repository";
import { KEY_PATTERN } from "../../keys/secret";
import type { KeyUsage } from "../../keys/usage";
import { planIncludesApi } from "../../plans";
import type { AuthFailures } from "../auth-failures";
import { failureBucket } from "../cidr";
import type { AppContext, AppEnv } from "../context";

export interface AuthOptions {
  keys: KeyCache;
  failures: AuthFailures;
  now: () => number;
}

/** The one 401: identical for every cause so it tells an attacker nothing. */
export const unauthorized = () =>
  fixedError("unauthorized", {}, { "WWW-Authenticate": 'Bearer realm="storeapi"' });

const tooManyFailures = (seconds: number) =>
  new ApiError(
    "too_many_failures",
    `Too many requests with invalid API keys came from this address; try again in ${seconds} seconds.`,
    {},
    { "Retry-After": String(seconds) },
  );

/**
 * The key a request presents. `Authorization` wins when both headers are sent; an
 * `Authorization` that is not `Bearer <key>` presents nothing (so it is a 401, never a
 * silent fall-back to `X-Api-Key`).
 */
export function presentedKey(
  authorization: string | undefined,
  apiKey: string | undefined,
): string | undefined {
  if (authorization !== undefined) return /^Bearer +(\S+) *$/i.exec(authorization)?.[1];
  return apiKey?.trim() || undefined;
}

/** 429 when the client's address is locked out for too many failed keys (of either kind). */
export function refuseBlockedIp(c: AppContext, failures: AuthFailures, now: number): void {
  if (!failures.anyBlocked) return;
  const blockedFor = failures.blockedFor(failureBucket(c.get("clientIp")()), now);
  if (blockedFor > 0) throw tooManyFailures(blockedFor);
}

/** Counts a failed key toward the client address's lockout; returns the one 401 to throw. */
export function failedKey(c: AppContext, failures: AuthFailures, now: number): ApiError {
  failures.recordFailure(failureBucket(c.get("clientIp")()), now);
  return unauthorized();
}

/**
 * Blocks an IP with too many failed keys, then authenticates the key (§2 steps 6–7).
 * Finding a key is a lookup of its digest in memory.
 */
export function authenticate(options: AuthOptions): MiddlewareHandler<AppEnv> {
  return async function authMiddleware(c, next) {
    // The bucket is parsed from the address only when it is needed (~5% of a point read).
    refuseBlockedIp(c, options.failures, options.now());

    const secret = presentedKey(c.req.header("authorization"), c.req.header("x-api-key"));
    const key =
      secret && KEY_PATTERN.test(secret)
        ? await options.keys.find(c.get("store"), secret)
        : undefined;
    const now = options.now();
    // Again after the wait for a store's keys (its first request): a burst of bad keys all
    // waiting for them would otherwise each be a 401, past the lockout's count.
    refuseBlockedIp(c, options.failures, now);
    if (!key || !isActive(key, now)) throw failedKey(c, options.failures, now);
    c.set("key", key);
    await next();
  };
}

/** 403 when the store's plan lacks the API (§2 step 8): before the rate limit, so not counted. */
export function requirePlan(): MiddlewareHandler<AppEnv> {
  return function requirePlanMiddleware(c, next) {
    const plan = c.get("store").plan;
    if (!planIncludesApi(plan)) {
      throw new ApiError(
        "plan_required",
        `The API is not included in the store's "${plan}" plan; upgrade to growth or higher.`,
      );
    }
    return next();
  };
}

/** Notes the key's last use: only a key that may use the API counts as used. */
export function recordKeyUse(usage: KeyUsage, now: () => number): MiddlewareHandler<AppEnv> {
  return function recordKeyUseMiddleware(c, next) {
    usage.touch(c.get("store"), c.get("key").id, now());
    return next();
  };
}
