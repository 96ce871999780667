import { type Context, Hono, type MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { JSX } from "hono/jsx/jsx-runtime";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { StorePool } from "../db/pool";
import { ApiError, asApiError } from "../errors";
import type { CidrList } from "../http/cidr";
import type { Bindings, Variables } from "../http/context";
import { readLimited } from "../http/json-body";
import { requestId } from "../http/middleware/request-id";
import { storeByHost } from "../http/middleware/store-by-host";
import { isSecure, transport } from "../http/middleware/transport";
import { requestPath, searchParamsOf } from "../http/request-url";
import { AREAS } from "../keys/permissions";
import {
  createKey,
  deleteKey,
  KeyInputError,
  KeyLimitError,
  KeyNotFoundError,
  listKeys,
  prepareKey,
} from "../keys/repository";
import type { KeyUsage } from "../keys/usage";
import { queueMail } from "../mail/outbox";
import { adminSignInLink } from "../mail/templates";
import type { StoreRegistry } from "../registry";
import { ASSETS } from "./assets";
import { FlashStore } from "./flash";
import { WindowLimit } from "./limits";
import { insertSignInLink, LINK_LIFETIME_MS, SIGN_IN_PATH } from "./links";
import {
  ADMIN_PATH,
  BAD_LINK,
  ConfirmDeletePage,
  type CreateFormValues,
  EMAIL_SENT,
  ErrorPage,
  FIELD_LABELS,
  KeyCreatedPage,
  KeysScreen,
  SignInPage,
} from "./pages";
import {
  endSession,
  findSession,
  SESSION_COOKIE,
  SESSION_LIFETIME_MS,
  type Session,
  signInWithToken,
} from "./sessions";

export interface AdminDeps {
  registry: StoreRegistry;
  pool: StorePool;
  /** Where each key's last use is looked up. */
  usage: KeyUsage;
  allowHttp: boolean;
  trustProxy: CidrList | null;
  /** After a key changes: the running server reloads the store's keys (and delivers the owner's notice). */
  keysChanged: (slug: string) => Promise<void>;
  onMailQueued: (slug: string) => void;
  logError: (requestId: string, error: unknown) => void;
  now: () => number;
}

type AdminEnv = {
  Bindings: Bindings;
  Variables: Variables & { session: Session; form: URLSearchParams };
};
type AdminContext = Context<AdminEnv>;

const FIFTEEN_MINUTES = 15 * 60_000;
const MAX_FORM_BYTES = 16 * 1024;
const BY_SCREEN = "the store admin (API and keys screen)";
const CREATED_PATH = "/api/admin/keys/new";
const KEY_ID = /^[1-9]\d{0,14}$/;

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
  store_unavailable: "Unavailable",
};

function page(
  c: AdminContext,
  element: JSX.Element,
  status: ContentfulStatusCode = 200,
): Promise<Response> {
  return Promise.resolve(element.toString()).then((html) =>
    c.html(`<!doctype html>${html}`, status),
  );
}

const redirect = (c: AdminContext, path: string) => c.redirect(path, 303);

/** `https://shop.example` for the request: the scheme it arrived on and its Host (default port dropped). */
function ownOrigin(c: AdminContext, trustProxy: CidrList | null): string {
  const secure = isHttps(c, trustProxy);
  const host = (c.req.header("host") ?? "").toLowerCase().replace(secure ? /:443$/ : /:80$/, "");
  return `${secure ? "https" : "http"}://${host}`;
}

function isHttps(c: AdminContext, trustProxy: CidrList | null): boolean {
  const peer = c.env?.peerIp ?? "unknown";
  return isSecure(
    c.env?.tls === true,
    trustProxy?.contains(peer) ?? false,
    c.req.header("x-forwarded-proto"),
  );
}

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

const forbidden = () =>
  new ApiError(
    "insufficient_scope",
    "This form was not sent from this page; reload the page and try again.",
  );

/** A URL-encoded form body, at most MAX_FORM_BYTES (anything else reads as an empty form). */
async function readForm(c: AdminContext): Promise<URLSearchParams> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) return new URLSearchParams();
  if (Number(c.req.header("content-length") ?? 0) > MAX_FORM_BYTES) {
    throw new ApiError("payload_too_large", `The form is larger than ${MAX_FORM_BYTES} bytes.`);
  }
  const bytes = await readLimited(c.req.raw.body, MAX_FORM_BYTES);
  return new URLSearchParams(new TextDecoder().decode(bytes));
}

/** The store admin's "API and keys" screen under /api/admin/ (management-api.md §3). */
export function adminApp(deps: AdminDeps): Hono<AdminEnv> {
  const app = new Hono<AdminEnv>({ getPath: requestPath });
  const flashes = new FlashStore();
  const perStore = new WindowLimit(5, FIFTEEN_MINUTES);
  const perIp = new WindowLimit(20, FIFTEEN_MINUTES);

  app.onError((error, c) => {
    if (!(error instanceof ApiError)) deps.logError(c.get("requestId") ?? "-", error);
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
  });

  // Checks in the contract's order: key in URL, HTTPS, OPTIONS, the store's own host.
  const headers: MiddlewareHandler<AdminEnv> = (c, next) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
    return next();
  };
  const keyInUrl: MiddlewareHandler<AdminEnv> = (c, next) => {
    if ([...searchParamsOf(c.req.url).keys()].some((name) => name.toLowerCase() === "apikey")) {
      throw new ApiError("key_in_url", "Never put an API key in the URL.");
    }
    return next();
  };
  const noOptions: MiddlewareHandler<AdminEnv> = (c, next) => {
    if (c.req.method === "OPTIONS") {
      throw new ApiError(
        "method_not_allowed",
        "This page accepts only GET and POST.",
        {},
        { Allow: "GET, POST" },
      );
    }
    return next();
  };
  app.use(
    requestId(),
    headers,
    keyInUrl,
    transport({ allowHttp: deps.allowHttp, trustProxy: deps.trustProxy }),
    noOptions,
  );
  for (const [path, asset] of Object.entries(ASSETS))
    app.get(path, (c) => c.body(asset.body, 200, { "Content-Type": asset.type }));
  app.use(storeByHost(deps.registry, deps.pool));

  const sessionOf = (c: AdminContext) =>
    findSession(c.get("db"), getCookie(c, SESSION_COOKIE), deps.now());
  /** Pages that need a session: without one, 303 to the sign-in page. */
  const signedIn: MiddlewareHandler<AdminEnv> = async (c, next) => {
    const session = await sessionOf(c);
    if (!session) return redirect(c, SIGN_IN_PATH);
    c.set("session", session);
    await next();
  };
  /** State-changing POSTs: same origin (403), a session (303 to sign in), the session's form token (403). */
  const guardedPost: MiddlewareHandler<AdminEnv> = async (c, next) => {
    const own = ownOrigin(c, deps.trustProxy);
    if (
      !isSameOrigin(
        { secFetchSite: c.req.header("sec-fetch-site"), origin: c.req.header("origin") },
        own,
      )
    )
      throw forbidden();
    const session = await sessionOf(c);
    if (!session) return redirect(c, SIGN_IN_PATH);
    const form = await readForm(c);
    if (form.get("formToken") !== session.formToken) throw forbidden();
    c.set("session", session);
    c.set("form", form);
    await next();
  };
  const storeName = (c: AdminContext) => c.get("store").name;

  app.get(SIGN_IN_PATH, async (c) => {
    const token = c.req.query("token");
    if (token === undefined) {
      if (await sessionOf(c)) return redirect(c, ADMIN_PATH);
      return page(c, <SignInPage storeName={storeName(c)} />);
    }
    const session = /^[A-Za-z0-9_-]{32,128}$/.test(token)
      ? await signInWithToken(c.get("db"), token, deps.now())
      : undefined;
    if (!session) return page(c, <SignInPage storeName={storeName(c)} error={BAD_LINK} />, 400);
    setCookie(c, SESSION_COOKIE, session.id, {
      path: "/api/admin",
      httpOnly: true,
      sameSite: "Strict",
      secure: isHttps(c, deps.trustProxy),
      maxAge: SESSION_LIFETIME_MS / 1000,
    });
    return redirect(c, ADMIN_PATH);
  });

  app.post(SIGN_IN_PATH, async (c) => {
    const own = ownOrigin(c, deps.trustProxy);
    if (
      !isSameOrigin(
        { secFetchSite: c.req.header("sec-fetch-site"), origin: c.req.header("origin") },
        own,
      )
    )
      throw forbidden();
    const store = c.get("store");
    const now = deps.now();
    // Every post counts, whatever the address, so a 429 reveals nothing about it.
    const ip = c.get("clientIp")();
    for (const [limit, key] of [
      [perIp, ip],
      [perStore, store.slug],
    ] as const) {
      if (!limit.take(key, now)) {
        c.header("Retry-After", String(limit.retryAfter(key, now)));
        const message = "Too many sign-in requests; wait a few minutes and try again.";
        return page(
          c,
          <ErrorPage title="Too many requests" message={message} storeName={store.name} />,
          429,
        );
      }
    }
    const email = (await readForm(c)).get("email")?.trim() ?? "";
    if (email === "")
      return page(
        c,
        <SignInPage storeName={store.name} error="Enter the store owner's email address." />,
        400,
      );
    if (email.toLowerCase() === store.ownerEmail.toLowerCase()) {
      await c.get("db").transaction(async (tx) => {
        const link = await insertSignInLink(tx, own, now);
        const mail = adminSignInLink({
          storeName: store.name,
          url: link.url,
          validMinutes: LINK_LIFETIME_MS / 60_000,
        });
        await queueMail(tx, { ...mail, to: store.ownerEmail }, now);
      });
      deps.onMailQueued(store.slug);
    }
    return page(c, <SignInPage storeName={store.name} notice={EMAIL_SENT} />);
  });

  app.post("/api/admin/sign-out", guardedPost, async (c) => {
    const { id } = c.get("session");
    await endSession(c.get("db"), id);
    flashes.drop(id);
    deleteCookie(c, SESSION_COOKIE, {
      path: "/api/admin",
      httpOnly: true,
      sameSite: "Strict",
      secure: isHttps(c, deps.trustProxy),
    });
    return redirect(c, SIGN_IN_PATH);
  });

  type ScreenExtras = { error?: string; notice?: string; values?: CreateFormValues };
  const screen = async (
    c: AdminContext,
    extra: ScreenExtras = {},
    status: ContentfulStatusCode = 200,
  ) => {
    const keys = await deps.usage.listKeys(c.get("db"), c.get("store").slug);
    const props = {
      storeName: storeName(c),
      keys,
      now: deps.now(),
      formToken: c.get("session").formToken,
      ...extra,
    };
    return page(c, <KeysScreen {...props} />, status);
  };

  app.get(ADMIN_PATH, signedIn, (c) => {
    const flash = flashes.take(c.get("session").id, deps.now(), "deleted");
    const notice =
      flash?.kind === "deleted"
        ? `The key ${flash.name} (${flash.hint}) was deleted; it no longer works.`
        : undefined;
    return screen(c, { notice });
  });
  app.get("/api/admin", (c) => redirect(c, ADMIN_PATH));

  app.post("/api/admin/keys", guardedPost, async (c) => {
    const form = c.get("form");
    const values: CreateFormValues = {
      name: form.get("name") ?? "",
      permissions: Object.fromEntries(AREAS.map((area) => [area, form.get(area) ?? undefined])),
      expires: form.get("expires") ?? "never",
    };
    const now = deps.now();
    const store = c.get("store");
    try {
      const input = prepareKey(values, now, { requireAccess: true });
      const created = await createKey(c.get("db"), store, input, BY_SCREEN, now);
      await deps.keysChanged(store.slug);
      flashes.put(
        c.get("session").id,
        { kind: "created", secret: created.secret, name: input.name },
        now,
      );
      return redirect(c, CREATED_PATH);
    } catch (error) {
      if (error instanceof KeyInputError) {
        return screen(
          c,
          { error: `${FIELD_LABELS[error.field] ?? error.field} ${error.problem}.`, values },
          400,
        );
      }
      if (error instanceof KeyLimitError) return screen(c, { error: error.message, values }, 409);
      throw error;
    }
  });

  app.get(CREATED_PATH, signedIn, (c) => {
    const { id, formToken } = c.get("session");
    const flash = flashes.take(id, deps.now(), "created");
    if (flash?.kind !== "created") return redirect(c, ADMIN_PATH);
    return page(
      c,
      <KeyCreatedPage
        storeName={storeName(c)}
        formToken={formToken}
        keyName={flash.name}
        secret={flash.secret}
      />,
    );
  });

  const activeKeyOf = async (c: AdminContext) => {
    const id = c.req.param("id") ?? "";
    const key = KEY_ID.test(id)
      ? (await listKeys(c.get("db"))).find((k) => k.id === Number(id) && k.deletedAt === null)
      : undefined;
    if (!key) throw new ApiError("not_found", "There is no such key, or it was already deleted.");
    return key;
  };

  app.get("/api/admin/keys/:id/delete", signedIn, async (c) => {
    const apiKey = await activeKeyOf(c);
    return page(
      c,
      <ConfirmDeletePage
        storeName={storeName(c)}
        formToken={c.get("session").formToken}
        apiKey={apiKey}
      />,
    );
  });

  app.post("/api/admin/keys/:id/delete", guardedPost, async (c) => {
    const store = c.get("store");
    const { id: keyId } = await activeKeyOf(c);
    const deleted = await deleteKey(c.get("db"), store, keyId, BY_SCREEN, deps.now()).catch(
      (error) => {
        if (error instanceof KeyNotFoundError)
          throw new ApiError("not_found", "There is no such key, or it was already deleted.");
        throw error;
      },
    );
    await deps.keysChanged(store.slug);
    flashes.put(
      c.get("session").id,
      { kind: "deleted", name: deleted.name, hint: deleted.hint },
      deps.now(),
    );
    return redirect(c, ADMIN_PATH);
  });

  // Anything else: sign in first, then 405 on a known path or 404.
  const known = [
    SIGN_IN_PATH,
    "/api/admin/sign-out",
    ADMIN_PATH,
    "/api/admin/keys",
    CREATED_PATH,
    /^\/api\/admin\/keys\/[^/]+\/delete$/,
  ];
  app.all("*", signedIn, (c) => {
    const path = c.req.path;
    if (known.some((p) => (typeof p === "string" ? p === path : p.test(path)))) {
      throw new ApiError(
        "method_not_allowed",
        "This page does not accept that method.",
        {},
        { Allow: "GET, POST" },
      );
    }
    throw new ApiError("not_found", "There is no such page.");
  });
  return app;
}
