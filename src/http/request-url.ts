import { getPath as honoGetPath } from "hono/utils/url";

/**
 * Bun hands over a request without a usable `Host` (an HTTP/1.0 health probe, an empty
 * `Host:`) with a bare `/path?query` URL, and one with a malformed `Host` (`[::1`) with
 * an absolute URL that `new URL` refuses. Neither may turn into a 500: these read the
 * path and the query from any of those forms.
 */

const PLACEHOLDER_ORIGIN = "http://host.invalid";

/**
 * An absolute URL for any request target: `/path`, a full URL, or an authority
 * (`CONNECT host:443`, which Bun hands over bare and Deno as `http://host:443`, the only
 * URL without a path; either way its path is `/host:443`).
 */
function absolute(url: string): string {
  if (url.startsWith("/")) return PLACEHOLDER_ORIGIN + url;
  const authority = url.indexOf("://") + 3;
  if (authority === 2) return `${PLACEHOLDER_ORIGIN}/${url}`;
  return url.includes("/", authority) ? url : `${PLACEHOLDER_ORIGIN}/${url.slice(authority)}`;
}

/** A `.` or `..` segment, plain or percent-encoded (`/x/%2e%2e/orders`). */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?#]|$)/i;

/**
 * Dot segments resolved as a URL parser resolves them: Bun hands the app `/x/../orders/1`
 * as `/orders/1`, Deno as sent, and both must answer alike.
 */
function withoutDotSegments(url: string): string {
  if (!DOT_SEGMENT.test(url)) return url;
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

/**
 * The decoded path Hono routes on (its own reader, given an absolute URL). A `*` in it is
 * written `%2A`: Hono's trie router takes a path `/*` for its own wildcard and ran the
 * middleware (the request log line) twice; no route has a `*`.
 */
export function requestPath(request: Request): string {
  const path = honoGetPath({ url: withoutDotSegments(absolute(request.url)) } as Request);
  return path.includes("*") ? path.replaceAll("*", "%2A") : path;
}

/** The query parameters of a request URL; never throws. */
export function searchParamsOf(url: string): URLSearchParams {
  const target = absolute(url);
  const pathStart = target.indexOf("/", target.indexOf("://") + 3);
  const queryStart = pathStart === -1 ? -1 : target.indexOf("?", pathStart);
  if (queryStart === -1) return new URLSearchParams();
  const hash = target.indexOf("#", queryStart);
  return new URLSearchParams(target.slice(queryStart + 1, hash === -1 ? undefined : hash));
}
