import type { SendMailOptions } from "nodemailer";
import type { MailKind } from "../outbox";

/** One outbox row, ready to hand to a transport. */
export interface OutgoingMail {
  store: string;
  id: number;
  kind: MailKind;
  from: string | { name: string; address: string };
  replyTo: string | null;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Stable per outbox row, so a repeated delivery carries the same Message-ID. */
  messageId: string;
  date: Date;
}

export interface Transport {
  readonly name: "smtp" | "dir" | "log";
  /** Resolves once the message is handed over; rejects with the reason otherwise. */
  send(mail: OutgoingMail): Promise<void>;
  close(): Promise<void>;
}

/** Line breaks of any kind (a CR in a customer's name too) as the one kind a body has. */
const oneLineBreak = (text: string) => text.replace(/\r\n?/g, "\n");

/**
 * The nodemailer message for an outbox row: plain text plus HTML, UTF-8 headers encoded by
 * nodemailer, every line ending in CRLF (RFC 5322: CR and LF only together).
 */
export function toMessage(mail: OutgoingMail): SendMailOptions {
  const { from } = mail;
  return {
    // A store's name may hold line breaks; a header is one line (the subject's are made spaces too).
    from: typeof from === "string" ? from : { ...from, name: from.name.replace(/[\r\n]+/g, " ") },
    to: mail.to,
    replyTo: mail.replyTo ?? undefined,
    subject: mail.subject,
    text: oneLineBreak(mail.text),
    html: oneLineBreak(mail.html),
    messageId: mail.messageId,
    date: mail.date,
    headers: { "Auto-Submitted": "auto-generated" },
    newline: "windows",
  };
}

/**
 * What a delivery failure means for the row:
 * - `rejected`: the server refused this message for good (5xx); fails the row once it has had
 *   `maxAttempts` tries of any kind;
 * - `deferred`: the server asked to try later (4xx);
 * - `unavailable`: the transport itself is down (no connection, TLS, login, disk); the worker
 *   pauses all delivery for a while instead of burning every row's attempts.
 */
export type FailureKind = "rejected" | "deferred" | "unavailable";

export function classifyFailure(error: unknown): FailureKind {
  const { code, responseCode } = (error ?? {}) as { code?: unknown; responseCode?: unknown };
  // Only a failure of this message's own commands is about the message. A refused greeting,
  // EHLO, STARTTLS (a 5xx there is `ETLS`) or login says the relay cannot take any mail now.
  if (typeof code !== "string" || !MESSAGE_FAILURES.has(code) || responseCode === 421)
    return "unavailable";
  if (typeof responseCode === "number" && responseCode >= 400 && responseCode < 500)
    return "deferred";
  return "rejected";
}

/** nodemailer's codes for MAIL FROM, RCPT TO and DATA refused, or a message it cannot send. */
const MESSAGE_FAILURES = new Set(["EENVELOPE", "EMESSAGE"]);

/** A failure as stored in `last_error`: one line, bounded. */
export function describeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.replace(/\s+/g, " ").trim() || "unknown error";
  return line.length > 500 ? `${line.slice(0, 497)}...` : line;
}
