import type { Db, Queryable } from "./driver";

/** The `idempotency` table of a store's database (and of platform.db): kept answers of creates. */

/** How long a kept answer is replayed (api-contract.md §6); housekeeping deletes older ones. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** Expired records deleted per stored answer: bounded work, yet the table cannot grow without end. */
const PURGE_BATCH = 100;

export interface StoredAnswer {
  fingerprint: string;
  status: number;
  body: string;
}

/** Whose answer it is: the API key (or host key) and its `Idempotency-Key`. */
export interface AnswerScope {
  keyId: number;
  key: string;
}

/**
 * A record whose create is running: status 0, its claim's token as the body. It is
 * written before the create in its own transaction, so a duplicate reaching another
 * server (sharing this database) waits for it instead of creating again.
 */
export const IN_PROGRESS = 0;
/**
 * A create still "running" after this long was a crashed server's: the next request takes
 * it over. Taking over is safe even if the first server was only slow: a create commits
 * only while its claim is still the one recorded (`assertClaimHeld`).
 */
export const CLAIM_TTL_MS = 10_000;
/**
 * The same for a create whose rows live in another database than its record (the
 * management API's): it cannot check its claim where it commits, so a slow one is given
 * longer before another server takes over.
 */
export const UNCHECKED_CLAIM_TTL_MS = 60_000;

/** A create whose claim was taken over by another server before it committed (it rolls back). */
export class ClaimLostError extends Error {
  constructor() {
    super("the Idempotency-Key's claim was taken over by another server");
  }
}

/** The record kept for this scope within the last 24 hours (an answer, or `IN_PROGRESS`), if any. */
export const findAnswer = (db: Queryable, scope: AnswerScope, now: number) =>
  db.get<StoredAnswer & { created_at: number }>(
    "SELECT fingerprint, status, body, created_at FROM idempotency WHERE key_id = ? AND idem_key = ? AND created_at > ?",
    [scope.keyId, scope.key, now - IDEMPOTENCY_TTL_MS],
  );

/** Whether a found record is a create still running (not a crashed server's). */
export const stillRunning = (
  record: { status: number; created_at: number },
  now: number,
  ttl = CLAIM_TTL_MS,
) => record.status === IN_PROGRESS && record.created_at > now - ttl;

/**
 * Marks the scope's create as running, unless a record (an answer, or a create running
 * elsewhere) already holds it. Returns the claim's token when this request may run the
 * create, else null.
 */
export function claimScope(
  db: Db,
  scope: AnswerScope,
  fingerprint: string,
  now: number,
  ttl = CLAIM_TTL_MS,
): Promise<string | null> {
  return db.transaction(async (tx) => {
    const held = await findAnswer(tx, scope, now);
    if (held && (held.status !== IN_PROGRESS || stillRunning(held, now, ttl))) return null;
    const claim = crypto.randomUUID();
    await tx.run(
      "INSERT OR REPLACE INTO idempotency (key_id, idem_key, fingerprint, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      [scope.keyId, scope.key, fingerprint, IN_PROGRESS, claim, now],
    );
    return claim;
  });
}

/** First in a claimed create's transaction: throws `ClaimLostError` unless the claim is still this one. */
export async function assertClaimHeld(tx: Queryable, scope: AnswerScope, claim: string) {
  const held = await tx.get(
    "SELECT 1 AS held FROM idempotency WHERE key_id = ? AND idem_key = ? AND status = ? AND body = ?",
    [scope.keyId, scope.key, IN_PROGRESS, claim],
  );
  if (!held) throw new ClaimLostError();
}

/** Gives up a claim whose create failed without an answer to keep (5xx, 429): a retry runs afresh. */
export async function releaseClaim(db: Db, scope: AnswerScope, claim: string): Promise<void> {
  await db.run(
    "DELETE FROM idempotency WHERE key_id = ? AND idem_key = ? AND status = ? AND body = ?",
    [scope.keyId, scope.key, IN_PROGRESS, claim],
  );
}

/** Stores an answer; first clears this scope's expired record and a batch of other expired ones. */
export async function storeAnswer(
  tx: Queryable,
  scope: AnswerScope,
  answer: StoredAnswer,
  now: number,
): Promise<void> {
  const cutoff = now - IDEMPOTENCY_TTL_MS;
  await tx.run("DELETE FROM idempotency WHERE key_id = ? AND idem_key = ?", [
    scope.keyId,
    scope.key,
  ]);
  await tx.run(
    "DELETE FROM idempotency WHERE rowid IN (SELECT rowid FROM idempotency WHERE created_at <= ? ORDER BY created_at LIMIT ?)",
    [cutoff, PURGE_BATCH],
  );
  await tx.run(
    "INSERT INTO idempotency (key_id, idem_key, fingerprint, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    [scope.keyId, scope.key, answer.fingerprint, answer.status, answer.body, now],
  );
}

/** The scope of a store create, in `host_idempotency` (no store's slug is empty). */
export const STORE_CREATE_SCOPE = "";

/**
 * A host key's `Idempotency-Key` and where it is used: a store's slug, or
 * `STORE_CREATE_SCOPE`. Management answers are kept where each create commits (the
 * store's database, platform.db for a store create), but the key is scoped to the host
 * key (management-api.md §2); platform.db `host_idempotency` remembers where each was
 * first used.
 */
export interface HostKeyUse {
  hostKeyId: number;
  key: string;
  scope: string;
}

/** The scope the key was first used in within the last 24 hours, if any. */
export async function firstScopeOf(platform: Db, use: HostKeyUse, now: number) {
  const found = await platform.get<{ scope: string }>(
    "SELECT scope FROM host_idempotency WHERE host_key_id = ? AND idem_key = ? AND created_at > ?",
    [use.hostKeyId, use.key, now - IDEMPOTENCY_TTL_MS],
  );
  return found?.scope;
}

/** Records where the key is used, unless it was used within 24 hours; clears a batch of expired records. */
export function recordScope(platform: Db, use: HostKeyUse, now: number): Promise<void> {
  const cutoff = now - IDEMPOTENCY_TTL_MS;
  return platform.transaction(async (tx) => {
    await tx.run(
      "DELETE FROM host_idempotency WHERE rowid IN (SELECT rowid FROM host_idempotency WHERE created_at <= ? ORDER BY created_at LIMIT ?)",
      [cutoff, PURGE_BATCH],
    );
    await tx.run(
      "INSERT INTO host_idempotency (host_key_id, idem_key, scope, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (host_key_id, idem_key) DO UPDATE SET scope = excluded.scope, created_at = excluded.created_at WHERE host_idempotency.created_at <= ?",
      [use.hostKeyId, use.key, use.scope, now, cutoff],
    );
  });
}
