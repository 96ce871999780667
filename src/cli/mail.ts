import { Platform } from "../db/platform";
import { StorePool } from "../db/pool";
import { formatIsrael, formatIsraelOrNull } from "../format/time";
import { dataDirOf, parseCommand, positionals, printJson } from "./args";
import { CliError, UsageError } from "./errors";

interface OutboxRow {
  id: number;
  kind: string;
  recipient: string;
  subject: string;
  status: string;
  attempts: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

async function list(argv: string[]) {
  const { values, positionals: args } = parseCommand(argv, { store: { type: "string" } });
  positionals(args, [], "storeapi mail list [--store SLUG]");
  const dataDir = dataDirOf(values);
  const platform = await Platform.open(dataDir);
  const pool = new StorePool(dataDir);
  try {
    const stores = await platform.listStores();
    const slugs = values.store ? [values.store] : stores.map((s) => s.slug);
    if (values.store && !stores.some((s) => s.slug === values.store)) throw new CliError(`no store "${values.store}"`);
    const rows = [];
    for (const slug of slugs) {
      const outbox = await pool.use(slug, (db) => db.all<OutboxRow>("SELECT * FROM outbox ORDER BY id"));
      for (const r of outbox) {
        rows.push({
          id: r.id,
          store: slug,
          kind: r.kind,
          to: r.recipient,
          subject: r.subject,
          status: r.status,
          attempts: r.attempts,
          lastError: r.last_error,
          createdAt: formatIsrael(r.created_at),
          sentAt: formatIsraelOrNull(r.sent_at),
        });
      }
    }
    if (values.json) return printJson(rows);
    if (rows.length === 0) return console.log("the outbox is empty");
    for (const r of rows) {
      const error = r.lastError ? `  last error: ${r.lastError}` : "";
      console.log(`${r.store}#${r.id}  ${r.status.padEnd(6)} ${r.kind.padEnd(17)} to ${r.to}  "${r.subject}"  attempts ${r.attempts}${error}`);
    }
  } finally {
    await pool.close();
    await platform.close();
  }
}

export async function mailCommand(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === "list") return list(rest);
  throw new UsageError(`unknown mail command "${sub ?? ""}"; use list`);
}
