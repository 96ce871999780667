import { randomUUID } from "node:crypto";
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import Database from "libsql";
import { holdsData } from "../file-system";
import { runtime } from "../runtime/runtime";
import { InaccessibleDatabase, isInaccessible } from "./driver";

/** The data directory cannot be used as asked (missing, or held by another server): exit 1. */
export class DataDirError extends Error {}

/** Data files hold customer data, key digests and the cursor secret: owner only. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** The path itself, or the nearest part of it that exists, when that is not a directory. */
function fileInPath(path: string): string | null {
  for (let at = resolve(path); ; at = dirname(at)) {
    if (existsSync(at)) return statSync(at).isDirectory() ? null : at === resolve(path) ? path : at;
    if (dirname(at) === at) return null;
  }
}

/** A data directory that must already exist (serve and the read-only commands never create one). */
export function requireDataDir(dataDir: string): void {
  const file = fileInPath(dataDir);
  if (file !== null)
    throw new DataDirError(
      `${dataDir} cannot be a data directory: ${file} is a file; give --data a directory`,
    );
  if (!existsSync(dataDir)) {
    throw new DataDirError(
      `no data directory at ${dataDir}; create one with storeapi stores add or storeapi load`,
    );
  }

  refuseUnfinishedBackup(dataDir);
}

/** A data directory a command only reads or changes: it must hold a registry already. */
export function requireRegistry(dataDir: string): void {
  requireDataDir(dataDir);
  refuseLostRegistry(dataDir);
  if (!existsSync(join(dataDir, "platform.db")))
    throw new DataDirError(
      `${dataDir} holds no storeapi data (no platform.db); create it with storeapi stores add or storeapi load`,
    );
}

/**
 * Refuses a data directory that belongs to another user: files a command made in it would
 * belong to this user (root, say), and a server running as the owner could not open them.
 */
export function requireOwnDataDir(dataDir: string): void {
  const me = process.getuid?.();
  if (me === undefined || !existsSync(dataDir)) return;
  const owner = statSync(dataDir).uid;
  if (owner === me) return;
  throw new DataDirError(
    `${dataDir} belongs to user id ${owner} and this is user id ${me}: run storeapi as its owner ` +
      `(sudo -u '#${owner}' storeapi …), so that the server can use every file it makes`,
  );
}

/** Written first into a backup's directory and removed once every store is copied. */
export const UNFINISHED_BACKUP = "BACKUP-UNFINISHED";
export const UNFINISHED_BACKUP_TEXT =
  "A storeapi backup is being written here, or was cut short: this is no data directory until this file is gone.\n";

/** Refuses the copy a `backup` cut short left: serving it would serve some of its stores only. */
export function refuseUnfinishedBackup(dataDir: string): void {
  if (!existsSync(join(dataDir, UNFINISHED_BACKUP))) return;
  throw new DataDirError(
    `${dataDir} is a backup that did not finish (${UNFINISHED_BACKUP} is there); take the backup again, into a new or empty directory`,
  );
}

/**
 * Refuses to make a new platform.db where the old one is gone but its data is not: it
 * would register none of the stores there, and a WAL left beside it would be read into
 * whichever platform.db is put back.
 */
export function refuseLostRegistry(dataDir: string): void {
  const registry = join(dataDir, "platform.db");
  const found = existsSync(registry);
  // An empty file (and WAL) is no registry either: a new one would be made in it.
  if (found && (holdsData(registry) || holdsData(`${registry}-wal`))) return;
  const storesDir = join(dataDir, "stores");
  const holdsStores =
    existsSync(storesDir) && readdirSync(storesDir).some((name) => name.endsWith(".db"));
  if (holdsStores)
    throw new DataDirError(
      `${registry} is ${found ? "empty" : "missing"}, but ${storesDir} holds stores: restore platform.db from a backup (a new one would register none of them)`,
    );
  if (!found && existsSync(`${registry}-wal`))
    throw new DataDirError(
      `${registry} is missing, but its ${registry}-wal is there: restore platform.db from a backup, or remove platform.db-wal and platform.db-shm to start afresh`,
    );
}

/** Creates the directory (owner only) when missing. */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Tightens an older install's modes: the directory and `stores/` to 0700, their files
 * to 0600. Runs once when a server starts; new files are private through the umask.
 * Returns the files (and directories) it may not change: another user's (copied in, or
 * made by a command run as root), which the server may not be able to use either.
 */
export function makeDataDirPrivate(dataDir: string): string[] {
  const notOurs: string[] = [];
  for (const dir of [dataDir, join(dataDir, "stores")]) {
    if (!existsSync(dir)) continue;
    if (!chmodIfOurs(dir, PRIVATE_DIR_MODE)) {
      notOurs.push(dir); // its files as they are: it may not even be readable
      continue;
    }
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isFile() && !chmodIfOurs(path, PRIVATE_FILE_MODE)) notOurs.push(path);
    }
  }
  return notOurs;
}

/**
 * The directory and its `stores/` closed to group and others, as every command opens it
 * (new files are private through the umask): a directory made 0777 before let any user
 * replace `platform.db` in it. The owner's own bits stay (a directory made read-only
 * stays so); another user's directory is left as it is.
 */
export function makeDirsPrivate(dataDir: string): void {
  for (const dir of [dataDir, join(dataDir, "stores")]) {
    const mode = statSync(dir, { throwIfNoEntry: false })?.mode ?? 0;
    if (mode & 0o077) chmodIfOurs(dir, mode & 0o7700); // setgid and sticky stay too
  }
}

/**
 * `chmod`; false for another user's file. A file gone since the directory was read
 * is skipped: a command beside the starting server removes a store's `-wal` and `-shm`
 * as it closes the store. One of ours that cannot be changed (immutable, or on a
 * read-only mount) is left as it is: that store answers 503 when written, naming its
 * file, while the others are served.
 */
function chmodIfOurs(path: string, mode: number): boolean {
  try {
    chmodSync(path, mode);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === "EPERM")
      return statSync(path, { throwIfNoEntry: false })?.uid === process.getuid?.();
    if (code !== "ENOENT" && code !== "EROFS") throw error;
  }
  return true;
}

/** Held by a server for its life (and by `load --replace`): one writer of stores per directory. */
export const SERVE_LOCK = "serve.lock";
/** Held by a load while it stages, registers and moves store files. */
export const LOAD_LOCK = "load.lock";
/**
 * Held while a store's file is made, moved or archived together with its registration
 * (a create or delete through the management API, `stores add`, a load's registration):
 * two processes making one slug would otherwise each replace the other's file.
 */
export const STORES_LOCK = "stores.lock";

const LOCK_POLL_MS = 20;

/**
 * An OS-level lock on a data directory: a small SQLite file held in an exclusive write
 * transaction. SQLite takes it with fcntl locks, which the kernel releases when the
 * process ends, even by kill -9, so a crash never leaves a stale lock behind.
 */
export class DataDirLock {
  /** Held on the instance: a collected connection would close and drop the lock. */
  private constructor(private db: InstanceType<typeof Database> | null) {}

  /** The lock, or null when another process (or connection) holds it. */
  static tryAcquire(dataDir: string, name = SERVE_LOCK): DataDirLock | null {
    const path = join(dataDir, name);
    let db: InstanceType<typeof Database> | undefined;
    try {
      db = new Database(path);
      db.exec("PRAGMA busy_timeout = 0");
      // No journal file: a lock that writes one could not be taken on a full disk, where a
      // backup must still read the data off.
      db.exec("PRAGMA journal_mode = MEMORY");
      db.exec("PRAGMA locking_mode = EXCLUSIVE");
      db.exec("BEGIN EXCLUSIVE");
      return new DataDirLock(db);
    } catch (error) {
      db?.close();
      if ((error as { code?: string }).code === "SQLITE_BUSY") return null;
      // Made by a server or command before, the file opens; its journal cannot be made.
      throw isInaccessible(error) ? new InaccessibleDatabase(path, error) : error;
    }
  }

  /**
   * The lock, waited for up to `waitMs` (polled: the wait never blocks the event loop), or
   * null; `waiting` is called once the first try finds it held.
   */
  static async waitFor(
    dataDir: string,
    name: string,
    waitMs: number,
    waiting?: () => void,
  ): Promise<DataDirLock | null> {
    const until = Date.now() + waitMs;
    for (let tries = 0; ; tries++) {
      const lock = DataDirLock.tryAcquire(dataDir, name);
      if (lock || Date.now() >= until) return lock;
      if (tries === 0) waiting?.();
      await runtime().sleep(LOCK_POLL_MS);
    }
  }

  /**
   * The lock for a server's life, or a DataDirError naming who holds it. A server writes its
   * directory (platform.db's WAL, new stores): one it may not write is named now, as when
   * the lock's journal had to be made there.
   */
  static forServer(dataDir: string): DataDirLock {
    const lock = DataDirLock.tryAcquire(dataDir);
    if (lock) {
      try {
        accessSync(dataDir, constants.W_OK | constants.X_OK);
      } catch (error) {
        lock.release();
        throw new InaccessibleDatabase(join(dataDir, SERVE_LOCK), error);
      }
      return lock;
    }
    // `load --replace` holds the serve lock too, for as long as it runs.
    throw new DataDirError(
      DataDirLock.isHeld(dataDir, LOAD_LOCK)
        ? `storeapi load --replace is replacing stores in ${dataDir}; start the server once it is done`
        : `another storeapi server is already serving ${dataDir}`,
    );
  }

  /** Whether another process (or connection) holds the lock now; takes and gives it back otherwise. */
  static isHeld(dataDir: string, name = SERVE_LOCK): boolean {
    const lock = DataDirLock.tryAcquire(dataDir, name);
    lock?.release();
    return lock === null;
  }

  release(): void {
    const db = this.db;
    this.db = null;
    if (!db) return;
    db.exec("ROLLBACK");
    db.close();
  }
}

/** How long a command waits for another process's change of stores (a server's create, a load's registration). */
export const COMMAND_STORES_WAIT_MS = 60_000;

/** A command's `busy` for `Location.changeStores`. */
export const commandStoresBusy = (where: string) => () =>
  new DataDirError(
    `another storeapi command kept changing the stores of ${where} for a minute; try again when it is done`,
  );

/** A command's `waiting` for `Location.changeStores`: one line on stderr, so a wait is never silent. */
export const commandStoresWaiting = (where: string) => () =>
  process.stderr.write(
    `storeapi: waiting for another storeapi process changing the stores of ${where} (up to a minute; on a libSQL server a node that stopped in the middle of a change holds them that long)\n`,
  );

/**
 * Runs `change` holding the data directory's stores lock (STORES_LOCK), waiting up to
 * `waitMs` for another process's change to end (`waiting` is called when it starts to
 * wait); `busy` is thrown when it does not.
 */
export async function withStoresLock<T>(
  dataDir: string,
  waitMs: number,
  busy: () => Error,
  change: () => Promise<T>,
  waiting?: () => void,
): Promise<T> {
  const lock = await DataDirLock.waitFor(dataDir, STORES_LOCK, waitMs, waiting);
  if (!lock) throw busy();
  try {
    return await change();
  } finally {
    lock.release();
  }
}

/**
 * This server's name among the nodes sharing a libSQL server: made once and kept in its
 * own data directory (`DIR/node-id`), so a restart knows which claims were its own; the
 * directory's lock means no other live process has it.
 */
export function nodeId(dataDir: string): string {
  const path = join(dataDir, "node-id");
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const id = randomUUID();
  writeFileSync(path, `${id}\n`, { mode: PRIVATE_FILE_MODE });
  return id;
}
