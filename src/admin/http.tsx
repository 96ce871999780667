import type { MiddlewareHandler } from "hono";
import type { JSX } from "hono/jsx/jsx-runtime";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError, asApiError } from "../errors";
import { STRICT_UTF8 } from "../format/text";
import type { CidrList } from "../http/cidr";
import { readLimited, refuseContentCodings, refuseTransferCodings } from "../http/json-body";
import { isSecure } from "../http/middleware/transport";
import { searchParamsOf } from "../http/request-url";
import type { RouteTable } from "../http/route-table";
import type { AdminContext, AdminDeps, AdminEnv, AdminState } from "./context";
import { SESSION_ENDED_PATH, SIGN_IN_PATH } from "./links";
import { ADMIN_PATH, ContinuePage, ErrorPage } from "./pages";
import { RANDOM_TOKEN } from "./secrets";
import { findSession, SESSION_COOKIE } from "./sessions";

const MAX_FORM_BYTES = 16 * 1024;

/** Headers on every answer of the screen, pages, redirects and errors alike. */
const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
};

const TITLES: Partial<Record<string, string>> = {
  https_required: "HTTPS required",
  key_in_url: "Key in the address",
  not_found: "Not found",
  method_not_allowed: "Not allowed",
  payload_too_large: "Too much data",
  json_required: "Wrong kind of form",
  store_unavailable: "Unavailable",
};

const UTF8 = new TextEncoder();

export function page(
  c: AdminContext,
  element: JSX.Element,
  status: ContentfulStatusCode = 200,
): Promise<Response> {
  return Promise.resolve(element.toString()).then((html) => {
    const body = `<!doctype html>${html}`;
    // Said outright: for HEAD Hono drops the body, and the runtime would say 0.
    const length = String(UTF8.encode(body).byteLength);
    return c.html(body, status, { "Content-Length": length });
  });
}

export const redirect = (c: AdminContext, path: string) => c.redirect(path, 303);

/** Every error as a page: an `ApiError`'s own status and words, anything else logged and a 500 naming the request. */
export const renderAdminError =
  (deps: AdminDeps) =>
  (error: Error, c: AdminContext): Promise<Response> => {
    if (!(error instanceof ApiError))
      deps.logError(c.get("requestId") ?? "-", error, c.get("store")?.slug ?? null);
    const answer = asApiError(error);
    if (answer.code === "server_error") {
      const message = `Something went wrong on our side; try again. (Request ${c.get("requestId") ?? "-"})`;
      return page(c, <ErrorPage title="Something went wrong" message={message} />, 500);
    }
    for (const [name, value] of Object.entries(answer.headers)) c.header(name, value);
    const title =
      answer.status === 403 ? "Not allowed" : (TITLES[answer.code] ?? "Something is wrong");
    return page(
      c,
      <ErrorPage title={title} message={answer.message} />,
      answer.status as ContentfulStatusCode,
    );
  };

export const securityHeaders: MiddlewareHandler<AdminEnv> = (c, next) => {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
  return next();
};

export const refuseKeyInUrl: MiddlewareHandler<AdminEnv> = (c, next) => {
  if ([...searchParamsOf(c.req.url).keys()].some((name) => name.toLowerCase() === "apikey")) {
    throw new ApiError("key_in_url", "Never put an API key in the URL.");
  }
  return next();
};

/** A 405 naming the methods a page answers, or a 404 for a path that is no page. */
export const wrongMethodOrNoPage = (pages: RouteTable, path: string) =>
  pages.refusal(path, () => new ApiError("not_found", "There is no such page."));

/** OPTIONS on a page of the screen is 405 with `Allow`; on any other path, 404 (api-contract.md §2 step 4). */
export const refuseOptions =
  (pages: () => RouteTable): MiddlewareHandler<AdminEnv> =>
  (c, next) => {
    if (c.req.method !== "OPTIONS") return next();
    throw wrongMethodOrNoPage(pages(), c.req.path);
  };

/** `https://shop.example` for the request: the scheme it arrived on and its Host (default port dropped). */
function ownOrigin(c: AdminContext, trustProxy: CidrList | null): string {
  const secure = isHttps(c, trustProxy);
  const host = (c.req.header("host") ?? "").toLowerCase().replace(secure ? /:443$/ : /:80$/, "");
  return `${secure ? "https" : "http"}://${host}`;
}

export function isHttps(c: AdminContext, trustProxy: CidrList | null): boolean {
  const peer = c.env?.peerIp ?? "unknown";
  return isSecure(
    c.env?.tls === true,
    trustProxy?.contains(peer) ?? false,
    c.req.header("x-forwarded-proto"),
  );
}

/** The screen's cookies: its own path, never read by scripts or sent from other sites. */
export const cookieOptions = (state: AdminState, c: AdminContext) => ({
  path: "/api/admin",
  httpOnly: true,
  sameSite: "Strict" as const,
  secure: isHttps(c, state.deps.trustProxy),
});

/**
 * A state-changing POST from this origin? `Sec-Fetch-Site` decides when the browser sends
 * it (with `no-referrer`, same-origin posts carry `Origin: null`); else `Origin` must be
 * the page's own. Neither header, or `Origin: null` alone, is not enough.
 */
export function isSameOrigin(
  headers: { secFetchSite?: string; origin?: string },
  own: string,
): boolean {
  if (headers.secFetchSite !== undefined) return headers.secFetchSite === "same-origin";
  return (
    headers.origin !== undefined &&
    headers.origin !== "null" &&
    headers.origin.toLowerCase() === own
  );
}

/** The request's own origin, after 403 unless the POST came from it. */
export function requireSameOrigin(c: AdminContext, trustProxy: CidrList | null): string {
  const own = ownOrigin(c, trustProxy);
  const headers = { secFetchSite: c.req.header("sec-fetch-site"), origin: c.req.header("origin") };
  if (isSameOrigin(headers, own)) return own;
  // What a browser sends from a page over plain HTTP on a host that is not `*.localhost`.
  const unsaid = headers.secFetchSite === undefined && headers.origin === "null";
  const localhost = /^http:\/\/(?:[^/:]+\.)?localhost(?::\d+)?$/.test(own);
  throw unsaid && !localhost && !isHttps(c, trustProxy) ? plainHttpForm() : forbidden();
}

const plainHttpForm = () =>
  new ApiError(
    "insufficient_scope",
    "Over plain HTTP browsers do not say which page a form comes from, except on localhost host names: open this screen over HTTPS (or, while developing, at a *.localhost host name).",
  );

const forbidden = () =>
  new ApiError(
    "insufficient_scope",
    "This form was not sent from this page; reload the page and try again.",
  );

/** A form from this site with another session's token: a page open since an earlier sign-in. */
const staleForm = () =>
  new ApiError(
    "insufficient_scope",
    "This form is from a page opened before you last signed in; reload the page and send it again.",
  );

/** A URL-encoded form body, at most MAX_FORM_BYTES (no body, or no Content-Type, reads as an empty form). */
export async function readForm(c: AdminContext): Promise<URLSearchParams> {
  const type = c.req.header("content-type") ?? "";
  if (type.trim() === "") return new URLSearchParams();
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
    throw new ApiError(
      "json_required",
      "Send this form as application/x-www-form-urlencoded, as the page does; reload the page and try again.",
    );
  }
  refuseTransferCodings(c.req.header("transfer-encoding"));
  refuseContentCodings(c.req.header("content-encoding"));
  if (Number(c.req.header("content-length") ?? 0) > MAX_FORM_BYTES) throw formTooLarge();
  const bytes = await readLimited(c.req.raw.body, MAX_FORM_BYTES, formTooLarge);
  const text = decodedForm(bytes);
  if (text === null)
    throw new ApiError(
      "invalid_field",
      "The form holds text that is not valid UTF-8; reload the page and type it again.",
      { field: "form" },
    );
  return new URLSearchParams(text);
}

const formTooLarge = (headers: Record<string, string> = {}) =>
  new ApiError(
    "payload_too_large",
    `The form is larger than ${MAX_FORM_BYTES} bytes; shorten what you typed and send it again.`,
    {},
    headers,
  );

/**
 * The form's text, or null unless it and every name and value in it (percent-decoded) are
 * UTF-8: URLSearchParams would turn other bytes into U+FFFD, and a key would be made with
 * a name nobody typed.
 */
function decodedForm(bytes: Uint8Array): string | null {
  try {
    const text = STRICT_UTF8.decode(bytes);
    for (const part of text.split(/[&=]/)) decodeURIComponent(part.replace(/\+/g, " "));
    return text;
  } catch {
    return null;
  }
}

/**
 * The session cookie's values, at most four. A browser sends two of one name when another
 * path or a parent domain set one too (a sibling site under the same domain can): taking
 * only the first let such a cookie sign the admin out.
 */
function sessionCookies(c: AdminContext): string[] {
  const values: string[] = [];
  for (const pair of (c.req.header("cookie") ?? "").split(";")) {
    const equals = pair.indexOf("=");
    if (equals < 0 || pair.slice(0, equals).trim() !== SESSION_COOKIE) continue;
    if (values.push(pair.slice(equals + 1).trim()) === 4) break;
  }
  return values;
}

/** The live session one of the request's session cookies names, if any. */
export async function sessionOf({ deps }: AdminState, c: AdminContext) {
  for (const id of sessionCookies(c).filter((value) => RANDOM_TOKEN.test(value))) {
    const session = await findSession(c.get("db"), c.get("store").ownerEmail, id, deps.now());
    if (session) return session;
  }
  return undefined;
}

/**
 * Where a request without a live session goes: the sign-in page, saying that the session
 * ended when the browser still sent one (signed out elsewhere, or 12 hours passed).
 */
const signInAgain = (c: AdminContext) =>
  redirect(
    c,
    sessionCookies(c).some((id) => RANDOM_TOKEN.test(id)) ? SESSION_ENDED_PATH : SIGN_IN_PATH,
  );

/**
 * A navigation from another site to the screen, without the session cookie: a
 * `SameSite=Strict` cookie is withheld there even when the browser holds one.
 */
const arrivesFromAnotherSite = (c: AdminContext) =>
  c.req.method === "GET" &&
  c.req.path === ADMIN_PATH &&
  c.req.header("sec-fetch-site") === "cross-site" &&
  sessionCookies(c).length === 0;

/**
 * Pages that need a session: without one, 303 to the sign-in page; the screen reached
 * from another site first goes on to itself, where a session cookie is sent if there is one.
 */
export const signedIn =
  (state: AdminState): MiddlewareHandler<AdminEnv> =>
  async (c, next) => {
    const session = await sessionOf(state, c);
    if (!session && arrivesFromAnotherSite(c))
      return page(c, <ContinuePage storeName={c.get("store").name} />);
    if (!session) return signInAgain(c);
    c.set("session", session);
    await next();
  };

/** State-changing POSTs: same origin (403), a session (303 to sign in), the session's form token (403). */
export const guardedPost =
  (state: AdminState): MiddlewareHandler<AdminEnv> =>
  async (c, next) => {
    requireSameOrigin(c, state.deps.trustProxy);
    const session = await sessionOf(state, c);
    // A form from this site comes from a page shown in a session: that session has ended.
    if (!session) return redirect(c, SESSION_ENDED_PATH);
    const form = await readForm(c);
    if (form.get("formToken") !== session.formToken) throw staleForm();
    c.set("session", session);
    c.set("form", form);
    await next();
  };
