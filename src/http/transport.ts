import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import type { CidrList } from "./cidr";
import type { AppEnv } from "./context";

export interface TransportOptions {
  allowHttp: boolean;
  trustProxy: CidrList | null;
}

/** Client IP: the peer, or behind a trusted proxy the right-most forwarded address not in the list. */
function clientIp(peerIp: string, forwardedFor: string | undefined, trustProxy: CidrList | null): string {
  if (!trustProxy || !trustProxy.contains(peerIp) || !forwardedFor) return peerIp;
  const hops = forwardedFor.split(",").map((s) => s.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trustProxy.contains(hops[i])) return hops[i];
  }
  return hops[0] ?? peerIp;
}

/**
 * Decides the client IP and whether the request came over HTTPS; plain HTTP is 403
 * `https_required` unless allowed. A trusted proxy must say `X-Forwarded-Proto: https`.
 */
export function transport(options: TransportOptions): MiddlewareHandler<AppEnv> {
  return async function transportMiddleware(c, next) {
    const peer = c.env?.peerIp ?? "unknown";
    const trusted = options.trustProxy?.contains(peer) ?? false;
    c.set("clientIp", clientIp(peer, c.req.header("x-forwarded-for"), options.trustProxy));
    const secure = c.env?.tls === true || (trusted && c.req.header("x-forwarded-proto")?.trim().toLowerCase() === "https");
    if (!secure && !options.allowHttp) {
      throw new ApiError("https_required", "This API is served over HTTPS only; repeat the request with https://.");
    }
    await next();
  };
}
