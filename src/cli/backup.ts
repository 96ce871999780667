import {
  existsSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { copyRows } from "../db/copy";
import {
  COMMAND_STORES_WAIT_MS,
  commandStoresBusy,
  makeDirsPrivate,
  UNFINISHED_BACKUP,
  UNFINISHED_BACKUP_TEXT,
} from "../db/data-dir";
import {
  DatabaseUnavailable,
  type Db,
  fileNamed,
  InaccessibleDatabase,
  isDiskFull,
  isInaccessible,
} from "../db/driver";
import { FileLocation, type Location, storeDbPath } from "../db/location";
import { latestVersion, type Migration, schemaVersion } from "../db/migrate";
import { platformMigrations, storeMigrations } from "../db/migrations";
import { collectingEvery, openDb } from "../db/open";
import { Platform, unregisterStore } from "../db/platform";
import { holdsData } from "../file-system";
import { command, locationOf } from "./args";
import { CliError } from "./errors";
import { printJson, printLine, progressPrinter } from "./output";

/** Fewer stores than this are copied in a blink: no progress lines. */
const PROGRESS_FROM = 50;

export interface BackupSummary {
  dest: string;
  stores: number;
  bytes: number;
  ms: number;
}

/** `path` with symbolic links resolved as far as it exists (a backup's DEST_DIR may not yet). */
function realPath(path: string): string {
  const absolute = resolve(path);
  const parent = dirname(absolute);
  if (existsSync(absolute) || parent === absolute) return realpathSync(absolute);
  return join(realPath(parent), basename(absolute));
}

/**
 * DEST_DIR must be absent or empty, so a backup never mixes with older files, and outside
 * the data directory, whose loss it is for.
 */
function prepareDest(dest: string, dataDir: string | null): void {
  if (dataDir !== null) {
    const [destPath, dataPath] = [realPath(dest), realPath(dataDir)];
    const where =
      destPath === dataPath
        ? "is the data directory"
        : destPath.startsWith(`${dataPath}${sep}`) && `is inside the data directory ${dataDir}`;
    if (where)
      throw new CliError(
        `${dest} ${where}: a backup there is lost with it; back up to another directory, ideally another disk`,
      );
  }
  if (existsSync(dest)) {
    if (!statSync(dest).isDirectory()) throw new CliError(`${dest} exists and is not a directory`);
    if (existsSync(join(dest, UNFINISHED_BACKUP)))
      throw new CliError(
        `${dest} holds a backup that did not finish (${UNFINISHED_BACKUP} is there): remove it and back up again, or back up into a new or empty directory`,
      );
    if (readdirSync(dest).length > 0)
      throw new CliError(`${dest} is not empty: back up into a new or empty directory`);
  }
  mkdirSync(join(dest, "stores"), { recursive: true });
  makeDirsPrivate(dest);
}

/**
 * `VACUUM INTO` reads one snapshot of the database (WAL included) while a server keeps
 * writing, and writes a compact, self-contained copy: each file is consistent as of the
 * moment its copy began.
 */
async function copyDb(db: Db, to: string): Promise<number> {
  await db.run("VACUUM INTO ?", [to]).catch((error) => {
    // The copy could not be made or written: the destination's fault, not the store's.
    if (isDiskFull(error))
      throw new CliError(
        `cannot write ${to}: the disk is full; free some space there and run the command again`,
      );
    throw isInaccessible(error) ? new InaccessibleDatabase(to, error) : error;
  });
  return statSync(to).size;
}

/**
 * From a libSQL server, whose VACUUM INTO would write on its own disk: the rows are read
 * inside one transaction (one snapshot; writers wait for it) into a fresh local file.
 */
async function copyFromServer(db: Db, to: string, migrations: Migration[]): Promise<number> {
  const copy = await openDb(`file:${to}`, migrations);
  try {
    await db.transaction((from) => copy.transaction((into) => copyRows(from, into, true)));
  } finally {
    await copy.close();
  }
  return statSync(to).size;
}

/** Runs `use` on a copy of platform.db (opened as a file: the copy is no data directory yet). */
async function withRegistryCopy<T>(path: string, use: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDb(`file:${path}`, platformMigrations);
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}

/** The stores a copy of platform.db registers. */
const slugsIn = (platformCopy: string) =>
  withRegistryCopy(platformCopy, async (db) =>
    (await db.all<{ slug: string }>("SELECT slug FROM stores ORDER BY slug")).map((r) => r.slug),
  );

/**
 * Once every store is copied: removes from the copy of platform.db the stores deleted
 * meanwhile, and marks every other one for mail. The registry is copied first, so a store
 * that queued its first mail after that has no marker in it, and a server started on the
 * restored copy would never look at that outbox.
 */
const finishRegistryCopy = (platformCopy: string, deleted: string[]) =>
  withRegistryCopy(platformCopy, (db) =>
    db.transaction(async (tx) => {
      for (const slug of deleted) await unregisterStore(tx, slug);
      await tx.run("INSERT OR IGNORE INTO mail_queued (slug) SELECT slug FROM stores");
    }),
  );

/**
 * A backup copies platform.db as it is, so it must be at this storeapi's schema: an older
 * one would be upgraded here, under a live older server, and the backup would be no use to
 * the older storeapi a rollback returns to.
 */
async function refuseOlderRegistry(location: FileLocation): Promise<void> {
  const db = await openDb(`file:${location.platformName}`, []);
  try {
    const [found, known] = [await schemaVersion(db), latestVersion(platformMigrations)];
    if (found < known)
      throw new CliError(
        `${location.platformName} has schema version ${found}, older than this storeapi's ${known}: ` +
          "back up with the storeapi that serves it (this one would upgrade the data directory, and the backup could not be restored for the older one)",
      );
  } finally {
    await db.close();
  }
}

/**
 * A store's database opened for its copy, or null when the store was deleted since the
 * registry was copied (on a libSQL server its namespace stays, archived). On files the
 * check and the open hold the stores lock: a deletion between the two would have the open
 * make an empty database where the store was, in the live directory and in the backup.
 * A file is copied as it is, upgrading nothing (stores are brought up to date when first
 * used, so an upgraded server's idle stores are still at the older schema); on a libSQL
 * server the store is brought up to date first, as every command there does, since its
 * copy is made at this storeapi's schema.
 */
async function openRegistered(location: Location, platform: Platform, slug: string) {
  const open = async () => {
    if (!(await platform.getStore(slug))) return null;
    if (!(await location.storeExists(slug))) throw location.storeMissing(slug);
    return location.openStore(slug, location.remote ? storeMigrations : []);
  };
  if (location.remote) return open();
  return location.changeStores(COMMAND_STORES_WAIT_MS, commandStoresBusy(location.describe), open);
}

/**
 * Copies platform.db, then every store it lists, into `dest` (from a data directory or a
 * libSQL server: the copy is a data directory either way); `progress` gets (done, total).
 */
export async function backup(
  source: string | Location,
  dest: string,
  progress?: (done: number, total: number) => void,
  destIsOurs?: () => void,
): Promise<BackupSummary> {
  const started = Date.now();
  const location = typeof source === "string" ? new FileLocation(source) : source;
  if (location instanceof FileLocation && !holdsData(location.platformName)) {
    const why = existsSync(location.platformName) ? "its platform.db is empty" : "no platform.db";
    throw new CliError(`${location.dataDir} is not a storeapi data directory (${why})`);
  }
  if (location instanceof FileLocation) await refuseOlderRegistry(location);
  prepareDest(dest, location instanceof FileLocation ? location.dataDir : null);
  destIsOurs?.(); // from here on, what DEST_DIR holds is this copy
  let platform: Platform | undefined;
  try {
    platform = await Platform.open(location);
    // Removed once every store is copied: a backup cut short (a kill, a power cut) is no
    // data directory, never one that quietly lacks stores.
    writeFileSync(join(dest, UNFINISHED_BACKUP), UNFINISHED_BACKUP_TEXT);
    const platformCopy = join(dest, "platform.db");
    let bytes = await copyDatabase(location, platform.db, platformCopy, platformMigrations).catch(
      (error) => {
        throw fileNamed(location.platformName, error);
      },
    );
    // The stores of the copied registry; one created after that copy is not in this backup.
    const slugs = await slugsIn(platformCopy);
    const deleted: string[] = [];
    const closed = collectingEvery();
    for (const [i, slug] of slugs.entries()) {
      const copied = await copyStore(location, platform, slug, dest);
      await closed();
      if (copied === null)
        deleted.push(slug); // since the registry was copied
      else bytes += copied;
      progress?.(i + 1, slugs.length);
    }
    await finishRegistryCopy(platformCopy, deleted);
    rmSync(join(dest, UNFINISHED_BACKUP));
    return { dest, stores: slugs.length - deleted.length, bytes, ms: Date.now() - started };
  } catch (error) {
    emptyDest(dest);
    throw error;
  } finally {
    await platform?.close();
  }
}

/** DEST_DIR was empty or absent: what is in it now is a failed or stopped copy. */
function emptyDest(dest: string): void {
  for (const name of readdirSync(dest)) rmSync(join(dest, name), { recursive: true, force: true });
}

/**
 * SIGTERM or SIGINT (a timer's `systemctl stop`, Ctrl-C) once the copy has begun empties
 * DEST_DIR before the exit, as a failure does: only a kill leaves a copy marked
 * unfinished. Before, DEST_DIR is not yet checked to be empty, and is left alone.
 */
class StopsEmptyingDest {
  private readonly stop = (signal: NodeJS.Signals) => {
    if (this.copying) emptyDest(this.dest);
    const what = this.copying ? `; ${this.dest} emptied` : "";
    writeSync(2, `storeapi: backup stopped by ${signal}${what}\n`);
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  private copying = false;

  constructor(private readonly dest: string) {
    process.once("SIGTERM", this.stop);
    process.once("SIGINT", this.stop);
  }

  readonly copyBegins = () => {
    this.copying = true;
  };

  readonly end = () => {
    process.off("SIGTERM", this.stop);
    process.off("SIGINT", this.stop);
  };
}

/** Copies `db` into the file `to`: as it is from a file, at this storeapi's schema from a libSQL server. */
const copyDatabase = (location: Location, db: Db, to: string, migrations: Migration[]) =>
  location.remote ? copyFromServer(db, to, migrations) : copyDb(db, to);

/** Copies a store into `dest`: its size in bytes, or null when it was deleted since the registry was copied. */
async function copyStore(location: Location, platform: Platform, slug: string, dest: string) {
  let db: Db | null = null;
  try {
    db = await openRegistered(location, platform, slug);
    return db ? await copyDatabase(location, db, storeDbPath(dest, slug), storeMigrations) : null;
  } catch (error) {
    if (error instanceof DatabaseUnavailable && !(await platform.getStore(slug))) return null;
    throw fileNamed(location.storeName(slug), error);
  } finally {
    await db?.close();
  }
}

export const backupCommand = command(
  {
    name: "backup",
    args: ["DEST_DIR"],
    summary:
      "Copy platform.db and every store into an empty DEST_DIR, consistently, also while a server runs.",
    flags: {},
  },
  async ({ values, args: [dest] }) => {
    const print = progressPrinter(PROGRESS_FROM);
    const signals = new StopsEmptyingDest(dest);
    const summary = await backup(
      locationOf(values),
      dest,
      (done, total) => print("backup: stores copied", done, total),
      signals.copyBegins,
    ).finally(signals.end);
    if (values.json) return printJson(summary);
    const mib = (summary.bytes / 1024 / 1024).toFixed(1);
    printLine(
      `backed up platform.db and ${summary.stores} stores (${mib} MiB) into ${dest} in ${(summary.ms / 1000).toFixed(1)} s`,
    );
  },
);
