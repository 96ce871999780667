import type { Db, Queryable } from "../db/driver";
import { digestOf, randomToken } from "./secrets";

/** A sign-in link is valid this long, and only once. */
export const LINK_LIFETIME_MS = 15 * 60_000;

export const SIGN_IN_PATH = "/api/admin/sign-in";

export interface SignInLink {
  url: string;
  token: string;
  expiresAt: number;
}

/** `{origin}/api/admin/sign-in?token=…`; origin without a trailing slash. */
export const signInUrl = (origin: string, token: string) =>
  `${origin.replace(/\/+$/, "")}${SIGN_IN_PATH}?token=${encodeURIComponent(token)}`;

/**
 * Makes a one-time sign-in link to the store whose database `tx` is, inside the caller's
 * transaction (so an emailed link exists exactly when its email does). Links past their
 * expiry are dropped on the way, so the table stays as small as the links in flight.
 */
export async function insertSignInLink(
  tx: Queryable,
  origin: string,
  now = Date.now(),
): Promise<SignInLink> {
  await tx.run("DELETE FROM admin_links WHERE expires_at <= ?", [now]);
  const token = randomToken();
  const expiresAt = now + LINK_LIFETIME_MS;
  await tx.run("INSERT INTO admin_links (digest, created_at, expires_at) VALUES (?, ?, ?)", [
    digestOf(token),
    now,
    expiresAt,
  ]);
  return { url: signInUrl(origin, token), token, expiresAt };
}

/** A sign-in link for the store whose database `db` is (the CLI's `admin-link`, the management API). */
export const createSignInLink = (db: Db, origin: string, now = Date.now()) =>
  db.transaction((tx) => insertSignInLink(tx, origin, now));

/**
 * Spends a token: true exactly once for a token made for this store and not yet expired.
 * One conditional UPDATE, so two requests racing with the same token cannot both win.
 */
export async function consumeSignInLink(
  tx: Queryable,
  token: string,
  now = Date.now(),
): Promise<boolean> {
  const result = await tx.run(
    "UPDATE admin_links SET used_at = ? WHERE digest = ? AND used_at IS NULL AND expires_at > ?",
    [now, digestOf(token), now],
  );
  return result.changes === 1;
}

/** An origin for a link: `http(s)://host[:port]` with nothing after it; null when it is not one. */
export function parseOrigin(text: string): string | null {
  try {
    const url = new URL(text);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    if (url.origin.toLowerCase() !== text.replace(/\/$/, "").toLowerCase()) return null;
    return url.origin;
  } catch {
    return null;
  }
}
