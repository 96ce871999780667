import type { MiddlewareHandler } from "hono";
import { fixedError } from "../../errors";
import { type CidrList, formatIp, parseHop, parseIp } from "../cidr";
import type { AppEnv } from "../context";

export interface TransportOptions {
  allowHttp: boolean;
  trustProxy: CidrList | null;
}

/** Longest `X-Forwarded-*` value looked at; longer ones are cut (a proxy chain is short). */
const MAX_FORWARDED_LENGTH = 2048;

/** Canonical texts of recent peer addresses: parsing one costs ~3% of a point read, and peers repeat. */
const canonicalPeers = new Map<string, string>();
const CANONICAL_PEERS_LIMIT = 4096;

const canonical = (address: string) => {
  let text = canonicalPeers.get(address);
  if (text === undefined) {
    const ip = parseIp(address);
    text = ip ? formatIp(ip) : address.slice(0, 64);
    if (canonicalPeers.size >= CANONICAL_PEERS_LIMIT) canonicalPeers.clear();
    canonicalPeers.set(address, text);
  }
  return text;
};

/**
 * Client IP: the peer, or behind a trusted proxy the right-most forwarded address not in
 * the list (addresses left of it were written by the client and prove nothing).
 */
export function clientIp(
  peerIp: string,
  forwardedFor: string | undefined,
  trustProxy: CidrList | null,
): string {
  if (!trustProxy?.contains(peerIp) || !forwardedFor) return canonical(peerIp);
  const hops = forwardedFor
    .slice(-MAX_FORWARDED_LENGTH)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const ip = parseHop(hops[i]);
    if (!ip) return hops[i].slice(0, 64); // unparsable: its own bucket, never a trusted hop
    if (!trustProxy.contains(ip)) return formatIp(ip);
  }
  // Every hop is a trusted proxy: the left-most is as close to the client as we can see.
  const first = hops.length ? parseHop(hops[0]) : null;
  return first ? formatIp(first) : canonical(peerIp);
}

/**
 * Whether the request reached us over HTTPS: a TLS connection, or a trusted proxy whose
 * `X-Forwarded-Proto` says `https`. When a proxy appends to a list, the right-most value
 * is the one our trusted peer wrote.
 */
export function isSecure(
  tls: boolean,
  trusted: boolean,
  forwardedProto: string | undefined,
): boolean {
  if (tls) return true;
  if (!trusted || !forwardedProto) return false;
  const last = forwardedProto.slice(-MAX_FORWARDED_LENGTH).split(",").pop() ?? "";
  return last.trim().toLowerCase() === "https";
}

/**
 * Decides the client IP and whether the request came over HTTPS; plain HTTP is 403
 * `https_required` unless allowed. A trusted proxy must say `X-Forwarded-Proto: https`.
 */
export function transport(options: TransportOptions): MiddlewareHandler<AppEnv> {
  const { trustProxy } = options;
  return function transportMiddleware(c, next) {
    // The peer address is looked up and parsed only when needed (~2% of a point read).
    const peer = () => c.env?.peerIp ?? "unknown";
    let ip: string | undefined;
    c.set("clientIp", () => (ip ??= clientIp(peer(), c.req.header("x-forwarded-for"), trustProxy)));
    if (
      !options.allowHttp &&
      !isSecure(
        c.env?.tls === true,
        trustProxy?.contains(peer()) ?? false,
        c.req.header("x-forwarded-proto"),
      )
    ) {
      throw fixedError("https_required");
    }
    return next();
  };
}
