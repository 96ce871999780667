import { isStoreUnusable } from "../db/driver";
import { Platform } from "../db/platform";
import { StorePool } from "../db/pool";
import { formatIsrael, formatIsraelOrNull } from "../format/time";
import { listMail, type OutboxRow } from "../mail/outbox";
import { command, existingLocationOf } from "./args";
import { CliError } from "./errors";
import { printJson, printLine } from "./output";

/** One outbox row as `mail list --json` shows it (operations.md), plus when a queued row is next tried. */
const toEntry = (store: string, row: OutboxRow) => ({
  id: row.id,
  store,
  kind: row.kind,
  to: row.recipient,
  subject: row.subject,
  status: row.status,
  attempts: row.attempts,
  lastError: row.last_error,
  createdAt: formatIsrael(row.created_at),
  sentAt: formatIsraelOrNull(row.sent_at),
  nextAttemptAt: row.status === "queued" ? formatIsrael(row.next_attempt_at) : null,
});

const list = command(
  {
    name: "mail list",
    summary: "Show the outbox: every email queued, sent or given up on.",
    flags: { store: { type: "string", value: "SLUG", help: "only this store's mail" } },
  },
  async ({ values }) => {
    const location = existingLocationOf(values);
    const platform = await Platform.open(location);
    const pool = new StorePool(location);
    try {
      const stores = await platform.listStores();
      if (values.store !== undefined && !stores.some((s) => s.slug === values.store))
        throw new CliError(`no store "${values.store}"`);
      const slugs = values.store !== undefined ? [values.store] : stores.map((s) => s.slug);
      const entries = [];
      // One store's damaged file hides no other store's mail; it is named once all is shown.
      const unreadable: Error[] = [];
      for (const slug of slugs) {
        try {
          for (const row of await pool.use(slug, listMail)) entries.push(toEntry(slug, row));
        } catch (error) {
          if (values.store !== undefined || !isStoreUnusable(error)) throw error;
          unreadable.push(error as Error);
        }
      }
      printEntries(entries, values.json, unreadable.length > 0);
      if (unreadable.length > 0)
        throw new CliError(
          `left out ${unreadable.length} ${unreadable.length === 1 ? "store" : "stores"} whose database cannot be read; the first: ${unreadable[0]?.message}`,
        );
    } finally {
      await pool.close();
      await platform.close();
    }
  },
);

function printEntries(
  entries: ReturnType<typeof toEntry>[],
  json: boolean | undefined,
  someLeftOut: boolean,
): void {
  if (json) {
    printJson(entries);
    return;
  }
  if (entries.length === 0) {
    printLine(someLeftOut ? "no mail in the stores that could be read" : "the outbox is empty");
    return;
  }
  for (const e of entries) {
    const when =
      e.status === "sent"
        ? `sent ${e.sentAt}`
        : e.status === "queued"
          ? `next try ${e.nextAttemptAt}`
          : "gave up";
    const error = e.lastError ? `  last error: ${e.lastError}` : "";
    printLine(
      `${e.store}#${e.id}  ${e.status.padEnd(6)} ${e.kind.padEnd(17)} to ${e.to}  "${e.subject}"  attempts ${e.attempts}, ${when}${error}`,
    );
  }
}

export const mailCommands = [list];
