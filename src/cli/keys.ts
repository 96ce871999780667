import { Platform, type Store } from "../db/platform";
import { StorePool } from "../db/pool";
import { formatIsrael, formatIsraelOrNull } from "../format/time";
import { describePermissions } from "../keys/permissions";
import { createKey, deleteKey, KeyInputError, KeyLimitError, KeyNotFoundError, listKeys, prepareKey } from "../keys/store";
import { dataDirOf, parseCommand, positionals, printJson, runSubcommand } from "./args";
import { CliError, UsageError } from "./errors";

const USAGE_CREATE =
  "storeapi keys create SLUG --name N [--products P] [--orders P] [--customers P] [--leads P] [--expires never/30d/90d/1y]";

/** Who did it, for the owner's email. */
const operator = () => `${process.env.USER ?? "an operator"} (command line)`;

/**
 * Opens the store for a key operation; afterwards bumps the store's key version (so a
 * running server reloads its keys) and its mail version (so it delivers the notice).
 */
async function withStore<T>(dataDir: string, slug: string, fn: (store: Store, pool: StorePool) => Promise<T>): Promise<T> {
  const platform = await Platform.open(dataDir);
  const pool = new StorePool(dataDir);
  try {
    const store = await platform.getStore(slug);
    if (!store) throw new CliError(`no store "${slug}"`);
    const result = await fn(store, pool);
    await platform.bumpKeysAndMail(slug);
    return result;
  } finally {
    await pool.close();
    await platform.close();
  }
}

type KeyFlags = { name: string; products?: string; orders?: string; customers?: string; leads?: string; expires?: string };

/** The flags checked by the shared key rules; a broken rule is a usage error naming the flag. */
function keyInput(flags: KeyFlags, now: number) {
  try {
    const { name, expires, ...permissions } = flags;
    return prepareKey({ name, permissions, expires }, now);
  } catch (error) {
    if (error instanceof KeyInputError) throw new UsageError(`--${error.field} ${error.problem}`);
    throw error;
  }
}

async function create(argv: string[]) {
  const { values, positionals: args } = parseCommand(argv, {
    name: { type: "string" },
    products: { type: "string" },
    orders: { type: "string" },
    customers: { type: "string" },
    leads: { type: "string" },
    expires: { type: "string" },
  });
  const [slug] = positionals(args, ["SLUG"], USAGE_CREATE);
  if (!values.name) throw new UsageError(`missing --name; usage: ${USAGE_CREATE}`);
  const now = Date.now();
  const input = keyInput(values as KeyFlags, now);
  const { permissions, expiresAt } = input;
  const created = await withStore(dataDirOf(values), slug, (store, pool) =>
    pool.use(slug, (db) => createKey(db, store, input, operator(), now)).catch((error) => {
      if (error instanceof KeyLimitError) throw new CliError(error.message);
      throw error;
    }),
  );
  const result = { id: created.id, key: created.secret, hint: created.hint, permissions, expiresAt: formatIsraelOrNull(expiresAt) };
  if (values.json) return printJson(result);
  console.log(`created key ${created.id} "${values.name}" for ${slug} (${describePermissions(permissions)})`);
  console.log(`expires: ${result.expiresAt ?? "never"}`);
  console.log("");
  console.log(`  ${created.secret}`);
  console.log("");
  console.log("This is the only time the key is shown; store it now. The store owner has been emailed.");
}

async function list(argv: string[]) {
  const { values, positionals: args } = parseCommand(argv, {});
  const [slug] = positionals(args, ["SLUG"], "storeapi keys list SLUG");
  const platform = await Platform.open(dataDirOf(values));
  const pool = new StorePool(dataDirOf(values));
  try {
    if (!(await platform.getStore(slug))) throw new CliError(`no store "${slug}"`);
    const keys = (await pool.use(slug, listKeys)).filter((k) => k.deletedAt === null);
    const rows = keys.map((k) => ({
      id: k.id,
      name: k.name,
      hint: k.hint,
      permissions: k.permissions,
      createdAt: formatIsrael(k.createdAt),
      expiresAt: formatIsraelOrNull(k.expiresAt),
      lastUsedAt: formatIsraelOrNull(k.lastUsedAt),
      expired: k.expiresAt !== null && k.expiresAt <= Date.now(),
    }));
    if (values.json) return printJson(rows);
    if (rows.length === 0) return console.log(`no keys for ${slug}`);
    for (const r of rows) {
      console.log(
        `${String(r.id).padStart(4)}  ${r.name.padEnd(20)} ${r.hint}  ${describePermissions(r.permissions)}  ` +
          `created ${r.createdAt}  expires ${r.expiresAt ?? "never"}${r.expired ? " (expired)" : ""}  last used ${r.lastUsedAt ?? "never"}`,
      );
    }
  } finally {
    await pool.close();
    await platform.close();
  }
}

async function remove(argv: string[]) {
  const { values, positionals: args } = parseCommand(argv, {});
  const [slug, idText] = positionals(args, ["SLUG", "ID"], "storeapi keys delete SLUG ID");
  if (!/^[1-9]\d{0,14}$/.test(idText)) throw new UsageError(`ID must be a positive integer, not "${idText}"`);
  const key = await withStore(dataDirOf(values), slug, (store, pool) =>
    pool.use(slug, (db) => deleteKey(db, store, Number(idText), operator())).catch((error) => {
      if (error instanceof KeyNotFoundError) throw new CliError(error.message);
      throw error;
    }),
  );
  if (values.json) return printJson({ id: key.id, name: key.name, hint: key.hint, deleted: true });
  console.log(`deleted key ${key.id} "${key.name}" (${key.hint}) from ${slug}; the store owner has been emailed`);
}

export const keysCommand = (argv: string[]) => runSubcommand("keys", argv, { create, list, delete: remove });
