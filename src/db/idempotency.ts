import type { Queryable } from "./driver";

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

/** The answer kept for this scope within the last 24 hours, if any. */
export const findAnswer = (db: Queryable, scope: AnswerScope, now: number) =>
  db.get<StoredAnswer>(
    "SELECT fingerprint, status, body FROM idempotency WHERE key_id = ? AND idem_key = ? AND created_at > ?",
    [scope.keyId, scope.key, now - IDEMPOTENCY_TTL_MS],
  );

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
