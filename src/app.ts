import { Hono, type MiddlewareHandler } from "hono";
import * as v from "valibot";
import { adminApp } from "./admin/app";
import type { StorePool } from "./db/pool";
import { ApiError, ClientClosed, echo, fixedError, renderError } from "./errors";
import type { AuthFailures } from "./http/auth-failures";
import { chain } from "./http/chain";
import type { CidrList } from "./http/cidr";
import type { AppContext, AppEnv, Bindings } from "./http/context";
import { idempotentRejection, type KeyedQueue, readIdempotencyKey } from "./http/idempotency";
import { readJsonBody } from "./http/json-body";
import { authenticate, recordKeyUse, requirePlan } from "./http/middleware/auth";
import { rateLimit } from "./http/middleware/rate-limit";
import { requestId } from "./http/middleware/request-id";
import { storeByHost } from "./http/middleware/store-by-host";
import { clientIp, transport } from "./http/middleware/transport";
import type { RateLimiter } from "./http/rate-limit";
import { requestPath, searchParamsOf } from "./http/request-url";
import { jsonAnswer, ok } from "./http/respond";
import { methodNotAllowed, noEndpoint, RouteTable } from "./http/route-table";
import { parseBody, parseParams, queryObject } from "./http/validate";
import type { KeyCache } from "./keys/cache";
import { allows } from "./keys/permissions";
import { withoutKeys } from "./keys/secret";
import type { KeyUsage } from "./keys/usage";
import { type ManageDeps, mountManage } from "./manage/app";
import { MANAGE_PREFIX } from "./manage/define";
import type { StoreRegistry } from "./registry";
import { apiRoutes } from "./routes";
import { API_PREFIX, accessFor, type RouteDef } from "./routes/define";

export interface RequestLog {
  time: string;
  requestId: string;
  /** The client's address, through trusted proxies (`--trust-proxy`). */
  ip: string;
  store: string | null;
  keyId: number | null;
  method: string;
  path: string;
  status: number;
  ms: number;
}

export interface AppDeps {
  registry: StoreRegistry;
  pool: StorePool;
  keys: KeyCache;
  usage: KeyUsage;
  rateLimiter: RateLimiter;
  authFailures: AuthFailures;
  allowHttp: boolean;
  trustProxy: CidrList | null;
  /** Makes concurrent creates with the same Idempotency-Key wait for the one that runs. */
  idempotencyQueue: KeyedQueue;
  /** Signs cursors so they cannot be forged. */
  cursorSecret: string;
  /** The OpenAPI document (served as /api/v1/openapi.json). */
  openapi: () => unknown;
  /** The HTML reference page built from the document; `onStoreHost`: whether the request's Host is a store's. */
  docsHtml: (onStoreHost: boolean) => string;
  /** Writes one request line; absent when those are not logged, so no line is even built. */
  log?: (entry: RequestLog) => void;
  /** `store`: the slug of the request's store, if it has one. */
  logError: (requestId: string, error: unknown, store: string | null) => void;
  /** Tells the mail worker a store has new mail (call after the transaction commits). */
  onMailQueued: (slug: string) => void;
  /** Call inside the transaction, before queuing mail: marks the store for the next start. */
  beforeMailQueued: (slug: string) => Promise<void>;
  /**
   * Makes a change of a store's keys between two bumps of its key version: the first finds
   * platform.db writable (held by another process, it answers 503 before anything changed),
   * the second has this server reload the store's keys at once, and other processes on
   * their poll, and deliver the owner's notice.
   */
  changeKeys: <T>(slug: string, change: () => Promise<T>) => Promise<T>;
  now: () => number;
  /** The host's management API (/manage/v1); absent, it is not served (404 like any other path). */
  manage?: ManageDeps;
  /** Records each answered request for metrics: the matched route pattern, status, seconds. */
  observe?: (routePath: string, status: number, seconds: number) => void;
  /** Why `/healthz` should answer 503 (the last background probe's finding), or null. */
  healthProblem?: () => ApiError | null;
}

declare module "hono" {
  interface ContextVariableMap {
    deps: AppDeps;
  }
}

/**
 * Paths outside /api/v1 are 404 (but for /healthz, whose other methods are 405 like those of
 * the service paths under /api/v1); OPTIONS anywhere is 405 (404 for no such path). No key needed.
 */
function frontDoorPaths(table: RouteTable, manageServed: boolean): MiddlewareHandler<AppEnv> {
  return function frontDoorPathsMiddleware(c, next) {
    const path = c.req.path;
    if (c.req.method === "OPTIONS") throw table.refusal(path, () => noEndpoint(path));
    if (!path.startsWith(`${API_PREFIX}/`) && table.allowed(path).length === 0) {
      // Another version of the management API (/manage/v2/…) is sent to the one served.
      const where =
        manageServed && path.startsWith("/manage/")
          ? `the management API lives under ${MANAGE_PREFIX}/`
          : `the API lives under ${API_PREFIX}/`;
      throw noEndpoint(path, `; ${where}`);
    }
    return next();
  };
}

function checkScope(c: AppContext, route: RouteDef): void {
  const access = accessFor(route.method);
  if (!allows(c.get("key").permissions, route.area, access)) {
    throw new ApiError(
      "insufficient_scope",
      `This key lacks the "${route.area}:${access}" permission this endpoint needs.`,
    );
  }
}

const noQuery = v.strictObject({});

/** What mountRoutes needs of a route (the store API's and the management API's alike). */
export type MountableRoute = Omit<RouteDef, "method" | "area"> & {
  method: string;
  /** How the body is read when not the usual JSON object (GET and DELETE read none), at most `limit` bytes. */
  readBody?: (c: AppContext, limit?: number) => Promise<unknown>;
};

/** One route's own work: scope, JSON body, then params → query → Idempotency-Key → body validation, then the handler. */
function routeHandler<R extends MountableRoute>(
  route: R,
  authorize: (c: AppContext, route: R) => void,
): (c: AppContext) => Promise<Response> {
  return async (c) => {
    authorize(c, route);
    const rawBody =
      route.method === "GET" || route.method === "DELETE"
        ? undefined
        : await (route.readBody ?? readJsonBody)(c, route.maxBodyBytes);
    const params = route.params ? parseParams(route.params, c.req.param()) : undefined;
    const query = parseParams(route.query ?? noQuery, queryObject(c.req.url));
    if (route.idempotent) readIdempotencyKey(c, rawBody);
    let body: unknown;
    try {
      body = route.body ? parseBody(route.body, rawBody) : rawBody;
    } catch (error) {
      if (route.idempotent && error instanceof ApiError) return idempotentRejection(c, error);
      throw error;
    }
    return route.handler(c, { params, query, body });
  };
}

/**
 * Hono answers HEAD with GET's headers and no body, for which Bun would send
 * `Content-Length: 0`: the answer names the length GET's body has instead.
 */
function withHeadLength(c: AppContext, response: Response): Response | Promise<Response> {
  if (c.req.method !== "HEAD") return response;
  return response
    .clone()
    .arrayBuffer()
    .then((body) => {
      response.headers.set("Content-Length", String(body.byteLength));
      return response;
    });
}

/** The last step for a path no route took: 404 naming it. */
export const refuseNoEndpoint: MiddlewareHandler<AppEnv> = (c) => {
  throw noEndpoint(c.req.path);
};

/** A public GET path's other methods: ordinary requests through `checks`, then 405. */
export function refuseOtherMethods(
  app: Hono<AppEnv>,
  path: string,
  checks: MiddlewareHandler<AppEnv>[],
): void {
  app.all(
    path,
    chain(...checks, () => {
      throw methodNotAllowed(["GET"]);
    }),
  );
}

/** The last step of a chain: its answer becomes the response (the steps before return nothing). */
export const answer =
  (respond: (c: AppContext) => Response | Promise<Response>): MiddlewareHandler<AppEnv> =>
  async (c) => {
    const response = await respond(c);
    c.res = c.req.method === "HEAD" ? await withHeadLength(c, response) : response;
  };

/**
 * Mounts each route with its method, after `checks`. A path's other methods, and paths
 * under `prefix` that no route has, are refused by one answer: 405 naming the path's
 * methods, or 404 (`RouteTable`).
 */
export function mountRoutes<R extends MountableRoute>(
  app: Hono<AppEnv>,
  prefix: string,
  routes: R[],
  checks: MiddlewareHandler<AppEnv>[],
  authorize: (c: AppContext, route: R) => void,
): void {
  const table = new RouteTable(
    routes.map((r) => ({ method: r.method, path: `${prefix}${r.path}` })),
  );
  const refuse = chain(
    ...checks,
    answer((c) => {
      throw table.refusal(c.req.path, () => noEndpoint(c.req.path));
    }),
  );
  // Literal paths first, so /products/batch is not taken for /products/:id.
  const paths = [...new Set(routes.map((r) => r.path))].sort(
    (a, b) => Number(a.includes(":")) - Number(b.includes(":")),
  );
  for (const path of paths) {
    for (const route of routes.filter((r) => r.path === path)) {
      app.on(
        route.method,
        `${prefix}${path}`,
        chain(...checks, answer(routeHandler(route, authorize))),
      );
    }
    // Another method on this path is refused here, before a `:param` path could take it.
    app.all(`${prefix}${path}`, refuse);
  }
  app.all(`${prefix}/*`, refuse);
}

function observeRequests(observe: NonNullable<AppDeps["observe"]>): MiddlewareHandler<AppEnv> {
  return async function observeMiddleware(c, next) {
    const started = performance.now();
    await next();
    observe(c.req.routePath, c.res.status, (performance.now() - started) / 1000);
  };
}

/** A logged path is cut here: a 16 KiB path from anyone would make a 16 KiB line. */
const LOGGED_PATH_LIMIT = 1_000;

/** The path as the log shows it: a key in it as its hint, cut only when long (no extra work for the usual path). */
const loggedPath = (path: string) => {
  const shown = withoutKeys(path);
  return shown.length > LOGGED_PATH_LIMIT ? echo(shown, LOGGED_PATH_LIMIT) : shown;
};

function requestLog(
  log: (entry: RequestLog) => void,
  now: () => number,
  trustProxy: CidrList | null,
): MiddlewareHandler<AppEnv> {
  return async function requestLogMiddleware(c, next) {
    const started = performance.now();
    await next();
    log({
      time: new Date(now()).toISOString(),
      requestId: c.get("requestId"),
      // Resolved by the transport step; a request answered before it (key_in_url) resolves it here.
      ip:
        c.get("clientIp")?.() ??
        clientIp(c.env?.peerIp ?? "unknown", c.req.header("x-forwarded-for"), trustProxy),
      store: c.get("store")?.slug ?? null,
      keyId: c.get("key")?.id ?? null,
      method: c.req.method,
      path: loggedPath(c.req.path),
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 100) / 100,
    });
  };
}

/** The whole HTTP app, its checks in the contract's order (api-contract.md §2). */
export function createApp(deps: AppDeps, routes: RouteDef[] = apiRoutes): Hono<AppEnv> {
  const app = new Hono<AppEnv>({ getPath: requestPath });
  const publicRoutes = [
    { method: "GET", path: "/healthz" },
    { method: "GET", path: `${API_PREFIX}/openapi.json` },
    { method: "GET", path: `${API_PREFIX}/docs` },
  ];
  const routeTable = new RouteTable([
    ...publicRoutes,
    ...routes.map((r) => ({ method: r.method, path: `${API_PREFIX}${r.path}` })),
  ]);

  // Errors keep the headers middleware prepared for the answer (X-Request-Id, RateLimit-*).
  // A client that hung up is no server error: its request line says 499, nothing more.
  const renderFailure = (c: AppContext, error: unknown) => {
    if (!(error instanceof ApiError || error instanceof ClientClosed))
      deps.logError(c.get("requestId") ?? "-", error, c.get("store")?.slug ?? null);
    const rendered = renderError(error);
    return withHeadLength(c, c.newResponse(rendered.body, rendered));
  };
  app.onError((error, c) => renderFailure(c, error));

  // The steps after the request id are chains (src/http/chain.ts) mounted with each route's
  // handler; a step with nothing to do after the answer returns next() instead of awaiting it.
  const provideDeps: MiddlewareHandler<AppEnv> = (c, next) => {
    c.set("deps", deps);
    return next();
  };
  const keyInUrl: MiddlewareHandler<AppEnv> = (c, next) => {
    const url = c.req.url;
    if (
      url.includes("?") &&
      [...searchParamsOf(url).keys()].some((name) => name.toLowerCase() === "apikey")
    ) {
      throw fixedError("key_in_url");
    }
    return next();
  };
  if (deps.observe) app.use(observeRequests(deps.observe));
  // The request id is made before routing, for every path; the request log must see every
  // rendered answer, errors included, so it is Hono middleware of its own, after the id.
  app.use(chain(provideDeps, requestId()));
  if (deps.log) app.use(requestLog(deps.log, deps.now, deps.trustProxy));
  const front = [keyInUrl];
  // The store API's steps in the contract's order (§2); after `path` only paths under
  // /api/v1/ and /healthz remain. Route, scope, validate and handler follow in mountRoutes.
  const checks = [
    ...front, // 1 key_in_url
    transport({ allowHttp: deps.allowHttp, trustProxy: deps.trustProxy }), // 3 https_required
    frontDoorPaths(routeTable, deps.manage !== undefined), // 4 not_found, OPTIONS
    storeByHost(deps.registry, deps.pool), // 5 unknown host
    authenticate({ keys: deps.keys, failures: deps.authFailures, now: deps.now }), // 6–7 lockout, key
    requirePlan(), // 8 plan_required
    recordKeyUse(deps.usage, deps.now),
    rateLimit(deps.rateLimiter, deps.now), // 9 rate_limited
  ];

  const health = (c: AppContext) => {
    const problem = deps.healthProblem?.();
    if (problem) throw problem;
    return ok(c, { status: "ok" });
  };
  app.get("/healthz", chain(...front, answer(health)));
  if (deps.manage) mountManage(app, deps, deps.manage, front);
  let openApiText: string | undefined; // ~230 KB: serialised on first request, not on every one
  const openApi = (c: AppContext) => {
    openApiText ??= JSON.stringify(deps.openapi());
    return jsonAnswer(c, openApiText);
  };
  app.get(`${API_PREFIX}/openapi.json`, chain(...front, answer(openApi)));
  app.get(
    `${API_PREFIX}/docs`,
    chain(
      ...front,
      answer((c) =>
        c.html(deps.docsHtml(deps.registry.resolveHost(c.req.header("host")) !== undefined)),
      ),
    ),
  );
  // Only GET of the service paths is public; another method is an ordinary request (§2 step 10).
  for (const { path } of publicRoutes) refuseOtherMethods(app, path, checks);
  mountRoutes(app, API_PREFIX, routes, checks, checkScope);
  // The store admin's screen is its own app of HTML pages (src/admin/, management-api.md §3).
  const admin = adminApp(deps);
  // The request itself, not a copy with the id as a header: a copy's body is a second
  // stream, and a form refused part-way (413) left the rest of a chunked upload unread
  // and its answer unsent. The screen answers with the id made before routing.
  const toAdmin = (c: AppContext) =>
    admin.fetch(c.req.raw, withRequestId(c.env, c.get("requestId")));
  app.all("/api/admin", toAdmin);
  app.all("/api/admin/*", toAdmin);
  // Any other path: the checks answer it (outside /api/v1 a 404 before any key).
  app.all("*", chain(...checks, refuseNoEndpoint));
  return app;
}

/** The connection as the server described it, with the id this app gave the request. */
const withRequestId = (connection: Bindings | undefined, requestId: string): Bindings =>
  Object.create(connection ?? null, { requestId: { value: requestId } });
