import type { Hono, MiddlewareHandler } from "hono";
import { type AppDeps, answer, mountRoutes, refuseNoEndpoint, refuseOtherMethods } from "../app";
import type { Platform } from "../db/platform";
import { chain } from "../http/chain";
import type { AppContext, AppEnv } from "../http/context";
import type { KeyedQueue } from "../http/idempotency";
import { failedKey, presentedKey, refuseBlockedIp } from "../http/middleware/auth";
import { rateLimit } from "../http/middleware/rate-limit";
import { refuseMalformedHost } from "../http/middleware/store-by-host";
import { transport } from "../http/middleware/transport";
import type { RateLimiter } from "../http/rate-limit";
import { jsonAnswer } from "../http/respond";
import { noEndpoint, RouteTable } from "../http/route-table";
import { MANAGE_PREFIX, type ManageRoute } from "./define";
import type { HostKey, HostKeyCache } from "./host-keys";
import { manageDocsHtml, manageOpenApiText } from "./openapi";
import { manageRoutes } from "./routes";

export interface ManageDeps {
  /** The server's connection to platform.db (the registry reads through it too). */
  platform: Platform;
  hostKeys: HostKeyCache;
  /** Per host key, `--manage-rate-limit` a minute. */
  rateLimiter: RateLimiter;
  /** Serialises what creates or removes a store's files, so two requests never race on one slug. */
  storeFiles: KeyedQueue;
}

declare module "hono" {
  interface ContextVariableMap {
    hostKey: HostKey;
  }
}

/** Blocks an IP with too many failed keys, then requires a host key (a store key is a 401 here). */
function authenticateHost(deps: AppDeps, hostKeys: HostKeyCache): MiddlewareHandler<AppEnv> {
  return function hostKeyMiddleware(c, next) {
    const now = deps.now();
    refuseBlockedIp(c, deps.authFailures, now);
    const secret = presentedKey(c.req.header("authorization"), c.req.header("x-api-key"));
    const key = secret ? hostKeys.find(secret, now) : undefined;
    if (!key) throw failedKey(c, deps.authFailures, now);
    c.set("hostKey", key);
    return next();
  };
}

/** The document and its page: GET needs no key (management-api.md §2); another method is an ordinary request. */
const PUBLIC_GETS: Array<[string, (c: AppContext) => Response]> = [
  [`${MANAGE_PREFIX}/openapi.json`, (c) => jsonAnswer(c, manageOpenApiText())],
  [`${MANAGE_PREFIX}/docs`, (c) => c.html(manageDocsHtml())],
];

/** OPTIONS is never served (no CORS): 405 naming the methods of a known path, before any key. */
function refuseOptions(routes: ManageRoute[]): MiddlewareHandler<AppEnv> {
  const table = new RouteTable([
    ...PUBLIC_GETS.map(([path]) => ({ method: "GET", path })),
    ...routes.map((r) => ({ method: r.method, path: `${MANAGE_PREFIX}${r.path}` })),
  ]);
  return function refuseOptionsMiddleware(c, next) {
    if (c.req.method !== "OPTIONS") return next();
    throw table.refusal(c.req.path, () => noEndpoint(c.req.path));
  };
}

/** Mounts /manage/v1 with its checks in the order of management-api.md §2; `front` are the app's first steps. */
export function mountManage(
  app: Hono<AppEnv>,
  deps: AppDeps,
  manage: ManageDeps,
  front: MiddlewareHandler<AppEnv>[],
  routes: ManageRoute[] = manageRoutes,
): void {
  const checks = [
    ...front,
    // Answered on any host, the one API a Host that is no host name could be routed to.
    refuseMalformedHost,
    transport({ allowHttp: deps.allowHttp, trustProxy: deps.trustProxy }),
    refuseOptions(routes),
    authenticateHost(deps, manage.hostKeys),
    rateLimit(manage.rateLimiter, deps.now, (c: AppContext) => `host:${c.get("hostKey").id}`),
  ];
  for (const [path, respond] of PUBLIC_GETS) {
    app.get(path, chain(...front, answer(respond)));
    refuseOtherMethods(app, path, checks);
  }
  mountRoutes(app, MANAGE_PREFIX, routes, checks, () => {});
  app.all(MANAGE_PREFIX, chain(...checks, refuseNoEndpoint));
}
