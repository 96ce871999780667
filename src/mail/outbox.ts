import type { Queryable } from "../db/driver";

export type MailKind = "customer_approved" | "order_status" | "key_created" | "key_deleted";

export interface Mail {
  kind: MailKind;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Queues an email inside the caller's transaction, so it exists exactly when its cause does. */
export async function queueMail(tx: Queryable, mail: Mail, now = Date.now()): Promise<number> {
  const result = await tx.run(
    `INSERT INTO outbox (kind, recipient, subject, text, html, status, attempts, next_attempt_at, created_at)
     VALUES (?, ?, ?, ?, ?, 'queued', 0, ?, ?)`,
    [mail.kind, mail.to, mail.subject, mail.text, mail.html, now, now],
  );
  return result.lastInsertRowid;
}
