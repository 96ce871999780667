import { existsSync } from "node:fs";
import { join } from "node:path";
import { copyRows } from "../db/copy";
import { DataDirLock, requireOwnDataDir, SERVE_LOCK } from "../db/data-dir";
import type { Queryable } from "../db/driver";
import { FileLocation, type Location } from "../db/location";
import { collectingEvery } from "../db/open";
import { Platform } from "../db/platform";
import { command, dataDirOf, locationOf } from "./args";
import { CliError, UsageError } from "./errors";
import { printJson, printLine, progressPrinter } from "./output";

/** Fewer stores than this are copied in a blink: no progress lines. */
const PROGRESS_FROM = 50;
/** Up to this many stores, the summary line names them (a refusal names this many). */
const NAMED_STORES = 10;

/** The first `NAMED_STORES` slugs, and how many more: a line stays short whatever the count. */
function namedFew(slugs: string[]): string {
  const more = slugs.length - NAMED_STORES;
  return more > 0
    ? `${slugs.slice(0, NAMED_STORES).join(", ")} and ${more} more`
    : slugs.join(", ");
}

/**
 * Copies every row into `to`, which keeps its own registry name (`meta` `registry`): the
 * namespaces made on the server carry the server's, where a copy from a backup of another
 * server names that one's.
 */
async function copyKeepingRegistry(from: Queryable, to: Queryable): Promise<void> {
  const own = await to.get<{ value: string }>("SELECT value FROM meta WHERE key = 'registry'");
  await copyRows(from, to, true);
  if (own) await to.run("UPDATE meta SET value = ? WHERE key = 'registry'", [own.value]);
}

/** Copies one store's database from files into its new namespace, in one transaction. */
async function copyStore(source: Location, target: Location, slug: string): Promise<void> {
  const from = await source.openStore(slug);
  const to = await target.openStore(slug);
  try {
    await to.transaction((tx) => copyKeepingRegistry(from, tx));
  } finally {
    await Promise.all([from.close(), to.close()]);
  }
}

/**
 * Moves a file-based data directory onto an empty libSQL server: every store's database
 * into its namespace first, then the registry in one transaction, so until the end the
 * server has no registered store (a failure deletes the namespaces it made).
 */
export const migrateCommand = command(
  {
    name: "migrate-to-libsql",
    summary:
      "Copy the data directory (--data; stop its server first, or use a backup) onto an empty libSQL server (--libsql-url, --libsql-admin-url).",
    flags: {},
  },
  async ({ values }) => {
    const dataDir = dataDirOf(values);
    const target = locationOf(values);
    if (!target.remote)
      throw new UsageError(
        "migrate-to-libsql needs --libsql-url (and --libsql-admin-url): the server to copy onto",
      );
    if (!existsSync(join(dataDir, "platform.db")))
      throw new CliError(`no platform.db in ${dataDir}: nothing to copy`);
    requireOwnDataDir(dataDir);
    // Held for the copy: a server must neither be writing what is copied nor start meanwhile.
    const serving = DataDirLock.tryAcquire(dataDir, SERVE_LOCK);
    if (!serving)
      throw new CliError(
        `a server is serving ${dataDir}; stop it first (what it wrote after the copy would be lost), or migrate a backup of it`,
      );
    try {
      return await copyOnto(new FileLocation(dataDir), target, values.json);
    } finally {
      serving.release();
    }
  },
);

/** Copies every store, then the platform's rows; the stores copied are deleted again on a failure. */
async function copyOnto(source: FileLocation, target: Location, json?: boolean): Promise<void> {
  const [from, to] = [await Platform.open(source), await Platform.open(target)];
  /** The namespaces made, the one being copied included: a failure deletes them all. */
  const made: string[] = [];
  try {
    const already = await to.listStores();
    if (already.length > 0) {
      throw new CliError(
        `the libSQL server already has stores (${namedFew(already.map((s) => s.slug))}); migrate-to-libsql fills an empty one`,
      );
    }
    const stores = await from.listStores();
    // Before anything is made: opening a missing file would copy an empty store.
    const [missing] = await source.missingStores(stores.map(({ slug }) => slug));
    if (missing) throw source.storeMissing(missing);
    try {
      const progress = progressPrinter(PROGRESS_FROM);
      const closed = collectingEvery();
      for (const { slug } of stores) {
        await target.createStore(slug);
        made.push(slug);
        await copyStore(source, target, slug);
        await closed();
        progress("migrate: stores copied", made.length, stores.length);
      }
      await to.db.transaction((tx) => copyKeepingRegistry(from.db, tx));
    } catch (error) {
      for (const slug of made) await target.deleteStore(slug).catch(() => {});
      throw error;
    }
  } finally {
    await Promise.all([from.close(), to.close()]);
  }
  if (json) return printJson({ stores: made, to: target.describe });
  const named = made.length <= NAMED_STORES ? ` (${made.join(", ")})` : "";
  printLine(
    `copied ${made.length} store${made.length === 1 ? "" : "s"}${named} to ${target.describe}`,
  );
}
