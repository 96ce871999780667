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

/**
 * What the store's database keeps of a session: a digest of its id under the store's owner
 * at sign-in, so a change of owner (`stores set`, the management API) ends every session
 * the previous owner had, wherever the change was made.
 */
const sessionDigest = (owner: string, id: string) => digestOf(`${owner}\n${id}`);

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
  owner: string,
  token: string,
  now = Date.now(),
): Promise<Session | undefined> {
  return db.transaction(async (tx) => {
    if (!(await consumeSignInLink(tx, token, now))) return undefined;
    await tx.run("DELETE FROM admin_sessions WHERE expires_at <= ?", [now]);
    const id = randomToken();
    const expiresAt = now + SESSION_LIFETIME_MS;
    await tx.run("INSERT INTO admin_sessions (digest, created_at, expires_at) VALUES (?, ?, ?)", [
      sessionDigest(owner, id),
      now,
      expiresAt,
    ]);
    return sessionOf(id, expiresAt);
  });
}

/** The live session a cookie value names in this store under its present owner, if any. */
export async function findSession(
  db: Queryable,
  owner: string,
  id: string | undefined,
  now = Date.now(),
): Promise<Session | undefined> {
  if (!id || id.length > 100) return undefined;
  const row = await db.get<{ expires_at: number }>(
    "SELECT expires_at FROM admin_sessions WHERE digest = ? AND expires_at > ?",
    [sessionDigest(owner, id), now],
  );
  return row && sessionOf(id, row.expires_at);
}

export async function endSession(db: Queryable, owner: string, id: string): Promise<void> {
  await db.run("DELETE FROM admin_sessions WHERE digest = ?", [sessionDigest(owner, id)]);
}
