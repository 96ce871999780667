import type { Args, Db, Queryable, Statement } from "../db/driver";

export type MailKind =
  | "customer_approved"
  | "order_status"
  | "key_created"
  | "key_deleted"
  | "admin_sign_in";
export type MailStatus = "queued" | "sent" | "failed";

export interface Mail {
  kind: MailKind;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** One outbox row as stored. */
export interface OutboxRow {
  id: number;
  kind: MailKind;
  recipient: string;
  subject: string;
  text: string;
  html: string;
  status: MailStatus;
  attempts: number;
  last_error: string | null;
  next_attempt_at: number;
  created_at: number;
  sent_at: number | null;
}

const INSERT_MAIL =
  "INSERT INTO outbox (kind, recipient, subject, text, html, status, attempts, next_attempt_at, created_at)";
const QUEUED = "?, ?, ?, ?, ?, 'queued', 0, ?, ?";
const queuedArgs = (mail: Mail, now: number): Args => [
  mail.kind,
  mail.to,
  mail.subject,
  mail.text,
  mail.html,
  now,
  now,
];

/** Queues an email inside the caller's transaction, so it exists exactly when its cause does. */
export async function queueMail(tx: Queryable, mail: Mail, now = Date.now()): Promise<number> {
  const result = await tx.run(`${INSERT_MAIL} VALUES (${QUEUED})`, queuedArgs(mail, now));
  return result.lastInsertRowid;
}

/**
 * The statement that queues an email in a `Db.batch` right after the statement that causes
 * it, only if that statement changed a row (`changes()` is the previous statement's count).
 */
export const queueMailIfChanged = (mail: Mail, now: number): Statement => ({
  sql: `${INSERT_MAIL} SELECT ${QUEUED} WHERE changes() > 0`,
  args: queuedArgs(mail, now),
});

/** When the store's next queued message is due, or null when nothing is queued (uses `outbox_due`). */
export async function nextDueAt(db: Queryable): Promise<number | null> {
  const row = await db.get<{ due: number | null }>(
    "SELECT min(next_attempt_at) AS due FROM outbox WHERE status = 'queued'",
  );
  return row?.due ?? null;
}

export async function dueMail(db: Queryable, now: number, limit: number): Promise<OutboxRow[]> {
  return db.all<OutboxRow>(
    "SELECT * FROM outbox WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?",
    [now, limit],
  );
}

/**
 * Claims a due row for one delivery attempt: counts the attempt and hides the row until
 * `claimUntil`, so a crash while the message is in hand leaves it queued for a later retry.
 * False when someone else claimed or finished it first.
 */
export async function claimMail(
  db: Queryable,
  id: number,
  now: number,
  claimUntil: number,
  node: string | null = null,
): Promise<boolean> {
  const result = await db.run(
    `UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, claimed_at = ?, claimed_by = ?
     WHERE id = ? AND status = 'queued' AND next_attempt_at <= ?`,
    [claimUntil, now, node, id, now],
  );
  return result.changes === 1;
}

/**
 * Makes rows claimed by a server that died (kill -9 between hand-over and marking) due
 * now. Called once per store at start. On files one server serves a data directory, so
 * any claim older than this process is an orphan (`node` null). On a libSQL server other
 * nodes' claims are theirs: only this node's own (`node`, kept across its restarts) are
 * released; a dead node's expire after `claimMs`. Reads first, so a clean outbox costs no
 * write.
 */
export async function releaseOrphanedClaims(
  db: Db,
  now: number,
  node: string | null = null,
): Promise<void> {
  const mine = node === null ? "" : " AND claimed_by = ?";
  const args = node === null ? [] : [node];
  const orphan = await db.get(
    `SELECT id FROM outbox WHERE status = 'queued' AND claimed_at IS NOT NULL${mine} LIMIT 1`,
    args,
  );
  if (!orphan) return;
  await db.run(
    `UPDATE outbox SET next_attempt_at = ?, claimed_at = NULL, claimed_by = NULL
     WHERE status = 'queued' AND claimed_at IS NOT NULL AND claimed_at < ?${mine}`,
    [now, now, ...args],
  );
}

export async function markSent(db: Queryable, id: number, now: number): Promise<void> {
  await db.run(
    "UPDATE outbox SET status = 'sent', sent_at = ?, last_error = NULL, claimed_at = NULL WHERE id = ?",
    [now, id],
  );
}

export async function markRetry(
  db: Queryable,
  id: number,
  error: string,
  retryAt: number,
): Promise<void> {
  await db.run(
    "UPDATE outbox SET last_error = ?, next_attempt_at = ?, claimed_at = NULL WHERE id = ? AND status = 'queued'",
    [error, retryAt, id],
  );
}

export async function markFailed(db: Queryable, id: number, error: string): Promise<void> {
  await db.run(
    "UPDATE outbox SET status = 'failed', last_error = ?, claimed_at = NULL WHERE id = ? AND status = 'queued'",
    [error, id],
  );
}

export async function listMail(db: Queryable): Promise<OutboxRow[]> {
  return db.all<OutboxRow>("SELECT * FROM outbox ORDER BY id");
}
