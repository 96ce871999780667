import { Hono } from "hono";
import { METHOD_NAME_ALL } from "hono/router";
import { requestId } from "../http/middleware/request-id";
import { storeByHost } from "../http/middleware/store-by-host";
import { transport } from "../http/middleware/transport";
import { requestPath } from "../http/request-url";
import { RouteTable } from "../http/route-table";
import { ASSETS } from "./assets";
import type { AdminDeps, AdminEnv, AdminState } from "./context";
import { FlashStore } from "./flash";
import {
  guardedPost,
  redirect,
  refuseKeyInUrl,
  refuseOptions,
  renderAdminError,
  securityHeaders,
  signedIn,
  wrongMethodOrNoPage,
} from "./http";
import {
  confirmDelete,
  createKeyFromForm,
  deleteKeyFromForm,
  forgetShownKey,
  showCreatedKey,
  showKeys,
} from "./keys";
import { WindowLimit } from "./limits";
import { SIGN_IN_PATH } from "./links";
import { ADMIN_PATH, CREATED_PATH } from "./pages";
import { sendSignInLink, signIn, signOut } from "./sign-in";

const FIFTEEN_MINUTES = 15 * 60_000;
const ONE_HOUR = 60 * 60_000;
/**
 * Ample for a store's five active keys rolled by hand; a loop of creates and deletes is
 * stopped (each leaves a row and two emails to the owner).
 */
const KEY_CREATES_PER_HOUR = 20;

/** The store admin's "API and keys" screen under /api/admin/ (management-api.md §3). */
export function adminApp(deps: AdminDeps): Hono<AdminEnv> {
  const state: AdminState = {
    deps,
    flashes: new FlashStore(),
    perStore: new WindowLimit(5, FIFTEEN_MINUTES),
    perIp: new WindowLimit(20, FIFTEEN_MINUTES),
    keyCreates: new WindowLimit(KEY_CREATES_PER_HOUR, ONE_HOUR),
  };
  const app = new Hono<AdminEnv>({ getPath: requestPath });
  app.onError(renderAdminError(deps));

  // Checks in the contract's order: key in URL, HTTPS, OPTIONS, the store's own host.
  app.use(
    requestId(),
    securityHeaders,
    refuseKeyInUrl,
    transport({ allowHttp: deps.allowHttp, trustProxy: deps.trustProxy }),
    refuseOptions(() => pages),
  );
  for (const [path, asset] of Object.entries(ASSETS))
    app.get(path, (c) =>
      c.body(asset.body, 200, {
        "Content-Type": asset.type,
        "Content-Length": asset.length,
      }),
    );
  app.use(storeByHost(deps.registry, deps.pool));

  app.use(forgetShownKey(state));

  const session = signedIn(state);
  const form = guardedPost(state);
  app.get(SIGN_IN_PATH, signIn(state));
  app.post(SIGN_IN_PATH, sendSignInLink(state));
  app.post("/api/admin/sign-out", form, signOut(state));
  app.get(ADMIN_PATH, session, showKeys(state));
  app.get("/api/admin", (c) => redirect(c, ADMIN_PATH));
  app.post("/api/admin/keys", form, createKeyFromForm(state));
  // A refused create re-shows the screen at this address; reloading it shows the screen.
  app.get("/api/admin/keys", session, (c) => redirect(c, ADMIN_PATH));
  app.get(CREATED_PATH, session, showCreatedKey(state));
  app.get("/api/admin/keys/:id/delete", session, confirmDelete);
  app.post("/api/admin/keys/:id/delete", form, deleteKeyFromForm(state));

  // The pages as registered above: what tells a 405 (a page, another method) from a 404.
  const pages = new RouteTable(app.routes.filter((route) => route.method !== METHOD_NAME_ALL));
  // Anything else: sign in first, then 405 on a known path or 404.
  app.all("*", session, (c) => {
    throw wrongMethodOrNoPage(pages, c.req.path);
  });
  return app;
}
