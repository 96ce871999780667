import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import type { KeyCache } from "../keys/cache";
import { KEY_PATTERN } from "../keys/secret";
import { isActive } from "../keys/store";
import type { KeyUsage } from "../keys/usage";
import { planIncludesApi } from "../plans";
import type { AuthFailures } from "./auth-failures";
import type { AppEnv } from "./context";

export interface AuthOptions {
  keys: KeyCache;
  usage: KeyUsage;
  failures: AuthFailures;
  now: () => number;
}

/** The one 401: identical for every cause so it tells an attacker nothing. */
const unauthorized = () =>
  new ApiError(
    "unauthorized",
    "A valid API key is required: send it as 'Authorization: Bearer <key>' or 'X-Api-Key: <key>'.",
  );

function presentedKey(authorization: string | undefined, apiKey: string | undefined): string | undefined {
  if (authorization !== undefined) {
    const match = /^Bearer +(\S+) *$/i.exec(authorization);
    return match?.[1] ?? "";
  }
  return apiKey;
}

/** Blocks an IP with too many failed keys, then authenticates the key and checks the plan. */
export function authenticate(options: AuthOptions): MiddlewareHandler<AppEnv> {
  return async function authMiddleware(c, next) {
    const now = options.now();
    const ip = c.var.clientIp;
    const blockedFor = options.failures.blockedFor(ip, now);
    if (blockedFor > 0) {
      throw new ApiError(
        "too_many_failures",
        `Too many requests with invalid API keys from this address; try again in ${blockedFor} seconds.`,
        {},
        { "Retry-After": String(blockedFor) },
      );
    }
    const secret = presentedKey(c.req.header("authorization"), c.req.header("x-api-key"));
    const store = c.var.store;
    const key = secret && KEY_PATTERN.test(secret) ? await options.keys.find(store, secret) : undefined;
    if (!key || !isActive(key, now)) {
      options.failures.recordFailure(ip, now);
      throw unauthorized();
    }
    c.set("key", key);
    options.usage.touch(store.slug, key.id, now);
    if (!planIncludesApi(store.plan)) {
      throw new ApiError(
        "plan_required",
        `The API is not included in the store's "${store.plan}" plan; upgrade to growth or higher.`,
      );
    }
    await next();
  };
}
