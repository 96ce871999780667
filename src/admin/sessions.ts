import type { Db, Queryable } from "../db/driver";
import { consumeSignInLink } from "./links";
import { digestOf, randomToken } from "./secrets";

export const SESSION_LIFETIME_MS = 12 * 3_600_000;
export const SESSION_COOKIE = "storeapi_admin";

export interface Session {
  /** The cookie's value (known only from the request that carries it). */
  id: string;
  /** The hidden form field every state-changing POST must carry. */
  formToken: string;
  expiresAt: number;
}

/**
 * The form token is derived from the session id (one-way), so it needs no storage, is one
 * value per session, and reveals nothing about the cookie when a page is seen.
 */
export const formTokenOf = (sessionId: string) => digestOf(`form:${sessionId}`);

const sessionOf = (id: string, expiresAt: number): Session => ({
  id,
  formToken: formTokenOf(id),
  expiresAt,
});

/**
 * Spends a sign-in token and starts a session in one transaction: a token that is spent,
 * expired or not this store's starts nothing (undefined). Expired sessions are dropped.
 */
export async function signInWithToken(
  db: Db,
  token: string,
  now = Date.now(),
): Promise<Session | undefined> {
  return db.transaction(async (tx) => {
    if (!(await consumeSignInLink(tx, token, now))) return undefined;
    await tx.run("DELETE FROM admin_sessions WHERE expires_at <= ?", [now]);
    const id = randomToken();
    const expiresAt = now + SESSION_LIFETIME_MS;
    await tx.run("INSERT INTO admin_sessions (digest, created_at, expires_at) VALUES (?, ?, ?)", [
      digestOf(id),
      now,
      expiresAt,
    ]);
    return sessionOf(id, expiresAt);
  });
}

/** The live session a cookie value names in this store, if any. */
export async function findSession(
  db: Queryable,
  id: string | undefined,
  now = Date.now(),
): Promise<Session | undefined> {
  if (!id || id.length > 100) return undefined;
  const row = await db.get<{ expires_at: number }>(
    "SELECT expires_at FROM admin_sessions WHERE digest = ? AND expires_at > ?",
    [digestOf(id), now],
  );
  return row && sessionOf(id, row.expires_at);
}

export async function endSession(db: Queryable, id: string): Promise<void> {
  await db.run("DELETE FROM admin_sessions WHERE digest = ?", [digestOf(id)]);
}
