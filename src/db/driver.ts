/**
 * The storage seam: everything above this file talks to a database through `Db`.
 * Two drivers implement it: `native` (the `libsql` binding, for `file:` URLs) and
 * `client` (@libsql/client, for `libsql://`/`http://` URLs, and `file:` on request).
 */

import { accessSync, constants, existsSync, statfsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { FILE_SYSTEM_REASONS, outOfDescriptors } from "../file-system";

export type SqlValue = string | number | bigint | null | Uint8Array;
export type Args = SqlValue[];
export type Row = Record<string, SqlValue>;

export interface RunResult {
  changes: number;
  lastInsertRowid: number;
}

/** One statement of a `Db.batch`. */
export interface Statement {
  sql: string;
  args?: Args;
}

/** What a transaction callback may do; also what `Db` offers outside one. */
export interface Queryable {
  all<T = Row>(sql: string, args?: Args): Promise<T[]>;
  get<T = Row>(sql: string, args?: Args): Promise<T | undefined>;
  run(sql: string, args?: Args): Promise<RunResult>;
}

export interface Db extends Queryable {
  /** What a store API request uses instead, when it is not this: reads from a local replica (ReplicaDb). */
  readonly requestView?: Db;
  /** Whether reads may miss writes made elsewhere (another node, a command) for up to a second: a replica's view. */
  readonly readsMayLag?: boolean;
  /** Runs `fn` inside one write transaction. Writes to one database are serialised. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs `statements` in order as one write transaction, answering each one's result. A
   * libSQL server gets the batches that wait for one database's writer together, in one
   * transaction and one round trip (group commit), so a batch must not rely on being
   * alone in its transaction: whatever it assumes about the rows, its SQL checks.
   */
  batch(statements: Statement[]): Promise<RunResult[]>;
  /** Runs a script of statements (migrations, pragmas). */
  exec(sql: string): Promise<void>;
  /** Moves the WAL into the database file without blocking readers. */
  checkpoint(): Promise<void>;
  /** Bytes in the WAL file now (0 for a database that is not a local file). */
  walSize(): number;
  /**
   * Moves the whole WAL into the database file and empties it, briefly holding writers;
   * another connection's reader or writer is waited for up to `waitMs` (a local file: in
   * short tries, the event loop free between them), then the WAL keeps what they need.
   */
  truncateWal(waitMs?: number): Promise<void>;
  /**
   * Closes, first moving the WAL into the database file unless `checkpoint` is false (the
   * pool's evictions: the WAL stays valid and is folded in later).
   */
  close(checkpoint?: boolean): Promise<void>;
}

/**
 * The database server was not reached or did not answer in time (a libSQL server, or a
 * replica's sync from it), or a registered store's database is missing: nothing is known
 * to have failed in the data, and the request may be retried. Answered 503
 * `store_unavailable`; a command prints the message.
 */
export class DatabaseUnavailable extends Error {}

/**
 * A request used its store's database after it was closed: the store was deleted or
 * replaced, or the server stopped, while the request waited longer than they wait for it.
 */
export const databaseClosed = (cause?: unknown) =>
  new DatabaseUnavailable(
    "the store's database was closed under this request (store deleted or replaced, or the server stopping)",
    { cause },
  );

/**
 * Whether a failure is the storage's rather than the request's: the database out of
 * reach, its disk full (SQLite has rolled the transaction back), its file damaged or
 * not to be opened. Answered 503 `store_unavailable`.
 */
/** SQLite's "database is locked" (SQLITE_BUSY, and its extended codes): another connection's lock. */
export const isLocked = (error: unknown) =>
  String((error as { code?: unknown } | null)?.code ?? "").startsWith("SQLITE_BUSY") ||
  /database is locked/.test((error as Error | null)?.message ?? "");

/** A registered store has no database: its file or namespace is missing. */
export class StoreDatabaseMissing extends DatabaseUnavailable {}

/**
 * A store `load` has registered but whose file it has yet to move into place (a second or
 * two after its commit; a server finishes the move of a load that died meanwhile).
 */
export class StoreArriving extends StoreDatabaseMissing {}

/**
 * The libSQL server answers 404 for a namespace its admin API has: sqld does so, now and
 * then, once `--max-active-namespaces` others are active (100 by default), most of all for
 * one it has just made.
 */
export class NamespaceNotServed extends DatabaseUnavailable {}

/** What to do about `NamespaceNotServed`, in its line. */
export const NOT_SERVED_HINT =
  "sqld answers so while --max-active-namespaces others are active (100 by default; start it with more than the number of stores)";

/** A database written by a newer storeapi: running on a schema this binary does not know could corrupt it. */
export class SchemaTooNewError extends Error {
  constructor(found: number, known: number) {
    super(
      `this database has schema version ${found} but this storeapi knows versions up to ${known}: ` +
        "it was written by a newer storeapi; run that version (or restore a backup taken before the upgrade)",
    );
  }
}

/**
 * The store's own database cannot be used (missing, damaged, not openable by this
 * process, written by a newer storeapi), as against storage out of reach or full for
 * every store. Its requests answer 503 while the other stores go on.
 */
export const isStoreUnusable = (error: unknown): boolean =>
  error instanceof StoreDatabaseMissing ||
  error instanceof NamespaceNotServed ||
  error instanceof SchemaTooNewError ||
  isDamaged(error) ||
  isInaccessible(error);

export const isStorageFailure = (error: unknown): boolean =>
  error instanceof DatabaseUnavailable || isDiskFull(error) || isStoreUnusable(error);

/** SQLite's primary result codes by number, for the extended codes the binding has no name for. */
const PRIMARY_CODES: Record<number, string> = {
  3: "SQLITE_PERM",
  8: "SQLITE_READONLY",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  26: "SQLITE_NOTADB",
};

/**
 * SQLite's result code of either driver's error (`SQLITE_FULL`, …), or Node's errno code
 * (`ENOSPC`). The `libsql` binding names some extended codes
 * (`SQLITE_IOERR_WRITE`) and calls others `UNKNOWN_SQLITE_ERROR_1544`
 * (SQLITE_READONLY_DIRECTORY): those are named by their primary code.
 */
const sqliteCode = (error: unknown): string => {
  const code = String((error as { code?: unknown } | null)?.code ?? "");
  const unknown = /^UNKNOWN_SQLITE_ERROR_(\d+)$/.exec(code);
  return unknown ? (PRIMARY_CODES[Number(unknown[1]) & 0xff] ?? code) : code;
};

/** SQLite, or a file write of ours, could not write for want of space. */
export const isDiskFull = (error: unknown): boolean =>
  sqliteCode(error) === "SQLITE_FULL" || sqliteCode(error) === "ENOSPC";

/**
 * The database file is not SQLite's or its pages do not hold together: only restoring it
 * from a backup helps. Its store answers 503 while the others go on.
 */
export const isDamaged = (error: unknown): boolean =>
  sqliteCode(error) === "SQLITE_NOTADB" || sqliteCode(error).startsWith("SQLITE_CORRUPT");

/**
 * `error` as a `DamagedDatabase` or `InaccessibleDatabase` naming `name`, when SQLite met
 * damage in a database already open, or could not write it (its own words do not say
 * which file); any other error as it is.
 */
export const fileNamed = (name: string, error: unknown): unknown => {
  if (error instanceof DamagedDatabase || error instanceof InaccessibleDatabase) return error;
  if (error instanceof NamespaceNotServed && !error.message.includes(name))
    return new NamespaceNotServed(`${name}: ${error.message}`, { cause: error });
  if (isDamaged(error)) return new DamagedDatabase(name, error);
  return isInaccessible(error) ? new InaccessibleDatabase(name, error) : error;
};

/**
 * The database file cannot be opened, or written, or read back by this process: another
 * user's file, a read-only file system, a directory where the file should be, an I/O
 * error. The data may be fine; the operator has to fix the file's place or owner.
 */
export const isInaccessible = (error: unknown): boolean =>
  error instanceof InaccessibleDatabase ||
  /^SQLITE_(CANTOPEN|READONLY|PERM|IOERR)/.test(sqliteCode(error)) ||
  // The `libsql` binding's failed open carries no code, only SQLite's number (14: CANTOPEN).
  /^ConnectionFailed\(.*: 14"\)$/s.test(String((error as Error | null)?.message));

/** How messages name a database on a libSQL server: `namespace store-shop1 on http://…`. */
export const namespaceName = (namespace: string, server: string) =>
  `namespace ${namespace} on ${server}`;
const isNamespaceName = (name: string) => /^namespace \S+ on (https?|libsql):\/\//.test(name);

/**
 * A database that could not be opened, written or read, named by its path with what is
 * wrong with the file; or by its namespace with what the libSQL server said (its disk, not
 * this machine's, is the one to look at).
 */
export class InaccessibleDatabase extends Error {
  constructor(name: string, cause: unknown) {
    super(
      isNamespaceName(name)
        ? `${name} cannot be used: the libSQL server says "${sqliteWords(cause)}" (is its disk full or read-only?)`
        : `${name} cannot be opened: ${whyNotOpened(name)}`,
      { cause },
    );
  }
}

/** SQLite's own words in an error, without the codes the drivers put before them. */
export const sqliteWords = (error: unknown) =>
  String((error as Error | null)?.message ?? error).replace(/^SQLITE_\w+: (SQLite error: )?/, "");

/** What the file system says about a file SQLite could not open (or create). */
function whyNotOpened(path: string): string {
  const directory = dirname(path);
  let checking = directory;
  const exhausted = outOfDescriptors();
  if (exhausted) return FILE_SYSTEM_REASONS[exhausted] as string;
  try {
    // Opening makes the -wal and -shm files beside it, which a full disk refuses.
    const room = statfsSync(directory);
    if (room.bavail === 0) return "the disk is full";
    if (room.ffree === 0) return "its file system has no room for another file (no free inodes)";
    if (existsSync(path)) {
      if (statSync(path).isDirectory()) return "it is a directory";
      checking = path;
      accessSync(path, constants.R_OK | constants.W_OK);
    }
    checking = directory;
    accessSync(directory, constants.W_OK | constants.X_OK);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === "EACCES" || code === "EPERM") return noAccess(checking, checking === directory);
    return FILE_SYSTEM_REASONS[code ?? ""] ?? String(code);
  }
  return "SQLite could not open it";
}

/** Why this user may not write `file` (the database, or its directory), and what fixes it. */
function noAccess(file: string, isDirectory: boolean): string {
  const me = process.getuid?.();
  const { uid, mode } = statSync(file);
  const what = isDirectory ? `its directory ${file}` : "it";
  if (uid !== me)
    return `${what} belongs to user id ${uid} and this is user id ${me}; chown it to this user`;
  const permissions = (mode & 0o777).toString(8).padStart(3, "0");
  return `this user (id ${me}) may not write ${what} (mode ${permissions}); chmod u+rw${isDirectory ? "x" : ""} it`;
}

/** A database file found damaged as it was opened, named by its path. */
export class DamagedDatabase extends Error {
  readonly code: string;

  constructor(path: string, cause: unknown) {
    super(`${path} is damaged (${sqliteWords(cause)}); restore it from a backup`, { cause });
    this.code = sqliteCode(cause);
  }
}

/** How long a statement on a database file waits for another connection's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;

/** How long one request to a libSQL server may take before it counts as unanswered (under Bun's 10 s idle cut). */
export const REMOTE_DEADLINE_MS = 8_000;

/** A FIFO lock: one holder at a time, waiters served in order. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    const { promise, resolve: release } = Promise.withResolvers<void>();
    this.tail = promise;
    await previous;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}
