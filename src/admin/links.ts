import type { Db, Queryable } from "../db/driver";
import { isHostName } from "../stores/rules";
import { digestOf, randomToken } from "./secrets";

/** A sign-in link is valid this long, and only once. */
export const LINK_LIFETIME_MS = 15 * 60_000;

export const SIGN_IN_PATH = "/api/admin/sign-in";
/** The sign-in page, saying the session ended (see `SESSION_ENDED`). */
export const SESSION_ENDED_PATH = `${SIGN_IN_PATH}?ended`;

export interface SignInLink {
  url: string;
  token: string;
  expiresAt: number;
}

/** `{origin}/api/admin/sign-in?token=…`; origin without a trailing slash. */
export const signInUrl = (origin: string, token: string) =>
  `${origin.replace(/\/+$/, "")}${SIGN_IN_PATH}?token=${encodeURIComponent(token)}`;

/**
 * A new link's token, its digest stored. Links past their expiry are dropped on the way,
 * so the table stays as small as the links in flight.
 */
async function insertSignInToken(tx: Queryable, now: number) {
  await tx.run("DELETE FROM admin_links WHERE expires_at <= ?", [now]);
  const token = randomToken();
  const expiresAt = now + LINK_LIFETIME_MS;
  await tx.run("INSERT INTO admin_links (digest, created_at, expires_at) VALUES (?, ?, ?)", [
    digestOf(token),
    now,
    expiresAt,
  ]);
  return { token, expiresAt };
}

/**
 * Stands for the token in a queued sign-in email: the link is made when the email is
 * sent, so no store database or backup holds a working token in clear (an outbox row
 * keeps its text after sending, and one waits there while mail cannot go out).
 */
export const TOKEN_MADE_WHEN_SENT = "TOKEN-MADE-WHEN-SENT";

/** A queued sign-in email's text and html with a new link's token put in, valid from now. */
export async function withNewSignInToken<M extends { text: string; html: string }>(
  db: Db,
  mail: M,
  now = Date.now(),
): Promise<M> {
  if (!mail.text.includes(TOKEN_MADE_WHEN_SENT)) return mail; // queued by an older storeapi
  const { token } = await db.transaction((tx) => insertSignInToken(tx, now));
  const put = (text: string) => text.replaceAll(TOKEN_MADE_WHEN_SENT, token);
  return { ...mail, text: put(mail.text), html: put(mail.html) };
}

/** A one-time sign-in link for the store whose database `db` is (the CLI's `admin-link`, the management API). */
export async function createSignInLink(
  db: Db,
  origin: string,
  now = Date.now(),
): Promise<SignInLink> {
  const { token, expiresAt } = await db.transaction((tx) => insertSignInToken(tx, now));
  return { url: signInUrl(origin, token), token, expiresAt };
}

/** A link that signs in now (its token's digest, then now): made, not spent, not expired. */
const USABLE_LINK = "digest = ? AND used_at IS NULL AND expires_at > ?";

/**
 * Spends a token: true exactly once for a token made for this store and not yet expired.
 * One conditional UPDATE, so two requests racing with the same token cannot both win.
 */
export async function consumeSignInLink(
  tx: Queryable,
  token: string,
  now = Date.now(),
): Promise<boolean> {
  const result = await tx.run(`UPDATE admin_links SET used_at = ? WHERE ${USABLE_LINK}`, [
    now,
    digestOf(token),
    now,
  ]);
  return result.changes === 1;
}

/** Whether the token would sign in now, without spending it (a HEAD's answer). */
export async function signInLinkUsable(db: Queryable, token: string, now = Date.now()) {
  const row = await db.get(`SELECT 1 AS usable FROM admin_links WHERE ${USABLE_LINK}`, [
    digestOf(token),
    now,
  ]);
  return row !== undefined;
}

/**
 * An origin for a link: `http(s)://host[:port]` with nothing after it, the host a DNS name
 * or an IP address; null when it is not one.
 */
export function parseOrigin(text: string): string | null {
  try {
    const url = new URL(text);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    if (!url.hostname.startsWith("[") && !isHostName(url.hostname)) return null;
    if (url.origin.toLowerCase() !== text.replace(/\/$/, "").toLowerCase()) return null;
    return url.origin;
  } catch {
    return null;
  }
}
