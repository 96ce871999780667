import type { Handler } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { queueMail } from "../mail/outbox";
import { adminSignInLink } from "../mail/templates";
import type { AdminEnv, AdminState } from "./context";
import { cookieOptions, page, readForm, redirect, requireSameOrigin, sessionOf } from "./http";
import {
  LINK_LIFETIME_MS,
  SIGN_IN_PATH,
  signInLinkUsable,
  signInUrl,
  TOKEN_MADE_WHEN_SENT,
} from "./links";
import { ADMIN_PATH, BAD_LINK, EMAIL_SENT, ErrorPage, SESSION_ENDED, SignInPage } from "./pages";
import { endSession, SESSION_COOKIE, SESSION_LIFETIME_MS, signInWithToken } from "./sessions";

type AdminHandler = Handler<AdminEnv>;

/**
 * GET sign-in: with a one-time token, start a session; without, the page asking for the
 * owner's email. A HEAD never spends the token (a mail scanner or link checker probing the
 * emailed link left the owner a dead one): it answers as GET would, without the session.
 */
export const signIn =
  (state: AdminState): AdminHandler =>
  async (c) => {
    const storeName = c.get("store").name;
    const token = c.req.query("token");
    if (token === undefined) {
      if (await sessionOf(state, c)) return redirect(c, ADMIN_PATH);
      const notice =
        c.req.query("sent") !== undefined
          ? EMAIL_SENT
          : c.req.query("ended") !== undefined
            ? SESSION_ENDED
            : undefined;
      return page(c, <SignInPage storeName={storeName} notice={notice} />);
    }
    const wellFormed = /^[A-Za-z0-9_-]{32,128}$/.test(token);
    if (c.req.method === "HEAD") {
      const usable = wellFormed && (await signInLinkUsable(c.get("db"), token, state.deps.now()));
      if (usable) return redirect(c, ADMIN_PATH);
    }
    const session =
      wellFormed && c.req.method !== "HEAD"
        ? await signInWithToken(c.get("db"), c.get("store").ownerEmail, token, state.deps.now())
        : undefined;
    if (!session) return page(c, <SignInPage storeName={storeName} error={BAD_LINK} />, 400);
    setCookie(c, SESSION_COOKIE, session.id, {
      ...cookieOptions(state, c),
      maxAge: SESSION_LIFETIME_MS / 1000,
    });
    return redirect(c, ADMIN_PATH);
  };

/** Where a sign-in form goes once posted: the sign-in page saying a link may be on its way. */
const EMAIL_SENT_PATH = `${SIGN_IN_PATH}?sent`;

/**
 * POST sign-in: the owner's email gets a one-time link (made when the email is sent);
 * any other address gets the same redirect, and every post counts against the limits.
 */
export const sendSignInLink =
  ({ deps, perIp, perStore }: AdminState): AdminHandler =>
  async (c) => {
    const own = requireSameOrigin(c, deps.trustProxy);
    const store = c.get("store");
    const now = deps.now();
    // Every post counts, whatever the address, so a 429 reveals nothing about it.
    const ip = c.get("clientIp")();
    for (const [limit, key] of [
      [perIp, ip],
      [perStore, store.slug],
    ] as const) {
      if (!limit.take(key)) {
        c.header("Retry-After", String(limit.retryAfter(key)));
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
      const mail = adminSignInLink({
        storeName: store.name,
        url: signInUrl(own, TOKEN_MADE_WHEN_SENT),
        validMinutes: LINK_LIFETIME_MS / 60_000,
      });
      // Queued once the answer has gone: waiting for that write for the owner's address
      // alone would tell it apart from any other by the time the answer takes.
      const requestId = c.get("requestId") ?? "-";
      setTimeout(() => {
        deps
          .beforeMailQueued(store.slug) // marked first, so a start after a crash sends it
          .then(() =>
            deps.pool.use(store.slug, (db) =>
              queueMail(db, { ...mail, to: store.ownerEmail }, now),
            ),
          )
          .then(
            () => deps.onMailQueued(store.slug),
            (error) => deps.logError(requestId, error, store.slug),
          );
      }, 0);
    }
    // Whatever the address: a reload of the page it goes to sends nothing again.
    return redirect(c, EMAIL_SENT_PATH);
  };

export const signOut =
  (state: AdminState): AdminHandler =>
  async (c) => {
    const { id } = c.get("session");
    await endSession(c.get("db"), c.get("store").ownerEmail, id);
    state.flashes.drop(id);
    deleteCookie(c, SESSION_COOKIE, cookieOptions(state, c));
    return redirect(c, SIGN_IN_PATH);
  };
