import { statSync } from "node:fs";
import Database from "libsql";
import { fileIdOf } from "../file-system";
import { runtime } from "../runtime/runtime";
import type { Args, Db, Queryable, Row, RunResult, SqlValue, Statement } from "./driver";
import { BUSY_TIMEOUT_MS, DatabaseUnavailable, databaseClosed, isLocked, Mutex } from "./driver";

interface Prepared {
  run(...args: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...args: unknown[]): unknown;
  all(...args: unknown[]): unknown[];
  raw(on: boolean): Prepared;
  columns(): { name: string }[];
  readonly reader: boolean;
}

const STATEMENT_CACHE_SIZE = 200;
/**
 * A connection caches statements only after its first 8 prepares (about a store's first
 * six requests: a GET of one order prepares three, then one). A store touched a few times
 * before it is closed again then leaves only short-lived statements, which a young-generation
 * collection (~4 ms) frees with the connection's files; cached ones live long, and only a
 * full collection (~25 ms) frees those.
 */
const UNCACHED_PREPARES = 8;

/** Descriptors each open connection holds: the database, its WAL and its shared-memory file. */
export const DESCRIPTORS_PER_CONNECTION = 3;

/** Closed connections whose descriptors wait for the collector, and of those the ones that cached statements. */
let unreleased = 0;
let unreleasedCached = 0;
const released = new FinalizationRegistry<boolean>((cached) => {
  unreleased--;
  if (cached) unreleasedCached--;
});
/** Closed since the last young collection without caching a statement. */
let closedUncached = 0;

/**
 * Connections closed whose descriptors wait for the collector (see `Connection.close`):
 * `cached` ones until a full collection, `uncached` ones (closed since the last young
 * collection) until a young one, and `all` of them as the collector finalises them: an
 * uncached one a young collection did not free (a collection promoted its statements
 * while it was open) stays counted there until a full one does.
 */
export const unreleasedConnections = () => ({
  cached: unreleasedCached,
  uncached: closedUncached,
  all: unreleased,
});

/** A young-generation collection (or a full one) has freed the uncached closed connections. */
export function youngCollected(): void {
  closedUncached = 0;
}

/** Counts a closed binding handle until the collector frees its descriptors (see `Connection.close`). */
function noteClosed(raw: object, cached: boolean): void {
  unreleased++;
  if (cached) unreleasedCached++;
  else closedUncached++;
  released.register(raw, cached);
}

/**
 * A cached statement read through `get` answers its row as an array (the binding's raw
 * mode), named here from its column list: the binding's own rows name every column
 * through N-API and carry a `_metadata` object, ~5 µs more per row (measured: 12 → 7 µs
 * for an order on one store). Asking a statement for its columns costs ~45 µs, so only
 * cached statements do. Lists are shared by statements with the same columns.
 */
interface RowStatement {
  statement: Prepared;
  /** Null for a statement that returns no rows (the binding refuses raw mode for it). */
  columns: string[] | null;
}

const MAX_COLUMN_LISTS = 1_000;
const columnLists = new Map<string, string[]>();

function rowStatement(statement: Prepared): RowStatement {
  if (!statement.reader) return { statement, columns: null };
  return { statement: statement.raw(true), columns: sharedColumns(statement) };
}

function sharedColumns(statement: Prepared): string[] {
  const names = statement.columns().map((column) => column.name);
  const key = names.join("\0");
  const shared = columnLists.get(key);
  if (shared) return shared;
  if (columnLists.size < MAX_COLUMN_LISTS) columnLists.set(key, names);
  return names;
}

function namedRow(columns: string[], values: SqlValue[]): Row {
  const row: Row = {};
  for (let i = 0; i < columns.length; i++) row[columns[i] as string] = values[i] as SqlValue;
  return row;
}

/** Caches a statement, dropping the oldest once the cache is full. */
function remember<T>(cache: Map<string, T>, sql: string, statement: T): void {
  if (cache.size >= STATEMENT_CACHE_SIZE) {
    const oldest = cache.keys().next().value as string;
    cache.delete(oldest);
  }
  cache.set(sql, statement);
}

/**
 * One connection with a prepared-statement cache (LRU by insertion order), one statement
 * per SQL text and use: after `all()`, the binding's next `get()` on the same statement
 * answers the first row of that `all()` whatever its own arguments (libsql 0.5.29). And
 * the binding's `run()` of a statement that answers rows (`PRAGMA wal_checkpoint`) leaves
 * it in progress: every later COMMIT on the connection fails. `runNow` runs those to
 * their end (nothing here runs `RETURNING` through `run`, so no changes are counted).
 */
export class Connection implements Queryable {
  // Keyed by the SQL string itself (a string built per call would be hashed per call).
  private statements = {
    get: new Map<string, RowStatement>(),
    all: new Map<string, Prepared>(),
    run: new Map<string, Prepared>(),
  };

  /** Statements prepared so far; the first `UNCACHED_PREPARES` are not cached. */
  private prepared = 0;
  private closed = false;

  constructor(readonly raw: InstanceType<typeof Database>) {}

  prepare(sql: string, use: "all" | "run" = "run"): Prepared {
    const cache = this.statements[use];
    const cached = cache.get(sql);
    if (cached) return cached;
    const { statement, cacheable } = this.prepareNew(sql);
    if (cacheable) remember(cache, sql, statement);
    return statement;
  }

  /** A new statement, and whether it may be cached (see `UNCACHED_PREPARES`). */
  private prepareNew(sql: string): { statement: Prepared; cacheable: boolean } {
    if (this.closed) throw databaseClosed();
    const statement = this.raw.prepare(sql) as unknown as Prepared;
    return { statement, cacheable: ++this.prepared > UNCACHED_PREPARES };
  }

  private getRow(sql: string, args: Args): unknown {
    let cached = this.statements.get.get(sql);
    if (!cached) {
      const { statement, cacheable } = this.prepareNew(sql);
      if (!cacheable) return statement.get(...args);
      cached = rowStatement(statement);
      remember(this.statements.get, sql, cached);
    }
    if (!cached.columns) return cached.statement.get(...args);
    const values = cached.statement.get(...args) as SqlValue[] | undefined;
    if (!values) return undefined;
    // Another connection changed the table (a migration beside this server): SQLite has
    // prepared the statement again, and a `*` may stand for other columns now.
    if (values.length !== cached.columns.length) cached.columns = sharedColumns(cached.statement);
    return namedRow(cached.columns, values);
  }

  /**
   * Closes the connection. The binding keeps its file descriptors (database, WAL, shm)
   * until every statement prepared on it is garbage-collected: it has no finalize. The
   * cache is dropped here, so the statements go with the next collection (a young one
   * when none was cached, see `UNCACHED_PREPARES`); `unreleasedConnections` counts the
   * connections still waiting.
   */
  close(): void {
    for (const cache of Object.values(this.statements)) cache.clear();
    this.closed = true;
    this.raw.close();
    noteClosed(this.raw, this.prepared > UNCACHED_PREPARES);
  }

  /** A script, through the binding's `exec` (which finalizes what it runs). */
  exec(sql: string): void {
    if (this.closed) throw databaseClosed();
    this.raw.exec(sql);
  }

  async all<T = Row>(sql: string, args: Args = []): Promise<T[]> {
    return this.prepare(sql, "all").all(...args) as T[];
  }

  async get<T = Row>(sql: string, args: Args = []): Promise<T | undefined> {
    return (this.getRow(sql, args) ?? undefined) as T | undefined;
  }

  async run(sql: string, args: Args = []): Promise<RunResult> {
    return this.runNow(sql, args);
  }

  /** `run`, throwing rather than rejecting: for a batch that must stop at its first failure. */
  runNow(sql: string, args: Args = []): RunResult {
    const statement = this.prepare(sql);
    if (statement.reader) {
      // Run to its end: the binding's `run()` would leave it in progress (see the class).
      statement.all(...args);
      return { changes: 0, lastInsertRowid: 0 };
    }
    const result = statement.run(...args);
    return { changes: Number(result.changes), lastInsertRowid: Number(result.lastInsertRowid) };
  }
}

/**
 * A connection that only reads (`query_only`), for a file another connection writes: an
 * embedded replica, which libsql's sync fills.
 */
export function openReader(path: string): Connection {
  const raw = new Database(path);
  raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  raw.exec("PRAGMA query_only = 1");
  return new Connection(raw);
}

/**
 * How long one try for another process's write lock blocks the thread (SQLite's busy
 * handler sleeps synchronously): a write waits for the lock in such tries, the event loop
 * free between them, up to `BUSY_TIMEOUT_MS` in all (see `NativeDb.lockForWrite`).
 */
export const LOCK_TRY_MS = 20;
/** The pause between two tries for the write lock. */
export const LOCK_RETRY_MS = 25;
/** How long a statement waits for another connection's lock: while trying for it, and otherwise. */
const TRY_FOR_LOCK = `PRAGMA busy_timeout = ${LOCK_TRY_MS}`;
const WAIT_FOR_LOCK = `PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`;
/** When a write arriving now gives up waiting for another process's lock. */
const lockDeadline = () => performance.now() + BUSY_TIMEOUT_MS;

/**
 * Statements SQLite runs only outside a transaction (`VACUUM INTO`, a checkpoint's
 * `PRAGMA`), and reads, which take no write lock.
 */
const outsideTransactions = (sql: string, statement: Prepared) =>
  statement.reader || /^\s*(VACUUM|PRAGMA)\b/i.test(sql);

function openConnection(path: string): Connection {
  const raw = new Database(path);
  try {
    // A short wait while it opens: a file another process holds in exclusive locking mode
    // is refused at once, and `openDb` tries again with the event loop free.
    raw.exec(`PRAGMA busy_timeout = ${LOCK_TRY_MS}`);
    raw.exec("PRAGMA journal_mode = WAL");
    raw.exec("PRAGMA synchronous = NORMAL");
    raw.exec("PRAGMA foreign_keys = ON");
    // Checkpoints run from the pool's timer on a worker thread, off the request path.
    raw.exec("PRAGMA wal_autocheckpoint = 0");
    // After a checkpoint lets the WAL restart, a WAL file grown past 64 MiB is cut back.
    raw.exec("PRAGMA journal_size_limit = 67108864");
    raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  } catch (error) {
    raw.close();
    throw error;
  }
  return new Connection(raw);
}

/**
 * `file:` databases through the `libsql` native binding, on one connection: reads, single
 * statements and transactions (one at a time) all run on it. Every statement is synchronous,
 * but a transaction spans awaits, and a read from elsewhere must not see its uncommitted
 * rows: only a read that arrives while a transaction is open takes a second connection,
 * opened then. A store read, and written now and then, holds one connection: three
 * descriptors and one page cache (~200 KB) instead of six and two.
 */
export class NativeDb implements Db {
  private main: Connection;
  /** Opened for the first read that overlaps an open transaction (see the class comment). */
  private overlapReader: Connection | undefined;
  private writes = new Mutex();
  private inTransaction = false;
  /** Whether anything was written since the pool last asked (see `takeWritten`). */
  private written = false;
  /** When the last write happened (`performance.now()`), for the checkpoint schedule. */
  lastWriteAt = 0;

  /** The file opened (device and inode): a second connection must open that one. */
  readonly fileId: string | null;

  constructor(readonly path: string) {
    this.main = openConnection(path);
    this.fileId = fileIdOf(path);
  }

  /** The connection a read outside any transaction runs on. */
  private get reader(): Connection {
    if (!this.inTransaction) return this.main;
    this.overlapReader ??= this.openAgain();
    return this.overlapReader;
  }

  /**
   * A second connection, to the same file. One to another file moved over the path would
   * take this connection's WAL, which keeps the path's name, for its own.
   */
  private openAgain(): Connection {
    if (fileIdOf(this.path) !== this.fileId)
      throw new DatabaseUnavailable(`${this.path} was removed or replaced while open`);
    return openConnection(this.path);
  }

  /** Connections open now (each holds `DESCRIPTORS_PER_CONNECTION`). */
  get connections(): number {
    return this.overlapReader ? 2 : 1;
  }

  all<T = Row>(sql: string, args?: Args) {
    return this.reader.all<T>(sql, args);
  }
  get<T = Row>(sql: string, args?: Args) {
    return this.reader.get<T>(sql, args);
  }
  /** One statement, in a transaction of its own (see `lockForWrite`). */
  run(sql: string, args?: Args) {
    this.noteWrite();
    const giveUpAt = lockDeadline();
    return this.writes.run(async () => {
      if (outsideTransactions(sql, this.main.prepare(sql))) return this.main.runNow(sql, args);
      await this.lockForWrite(giveUpAt);
      return this.commitNow(() => this.main.runNow(sql, args));
    });
  }

  /**
   * Takes the write lock (`BEGIN IMMEDIATE`), waiting for another process's transaction
   * without blocking the event loop: tries of `LOCK_TRY_MS`, a pause between them, until
   * `giveUpAt` (`BUSY_TIMEOUT_MS` after the write arrived, however long it queued behind
   * this process's other writes); then the database is unavailable (503). Taken before any
   * statement that writes, and through `exec`, which finalizes what it runs: a prepared
   * statement refused for the lock stays in progress (the binding never resets it; a `BEGIN`
   * too, until it is collected), and every later write on the connection would join a
   * transaction that never commits, or fail to commit.
   */
  private async lockForWrite(giveUpAt: number): Promise<void> {
    for (;;) {
      try {
        this.beginImmediate();
        return;
      } catch (error) {
        if (!isLocked(error)) throw error;
        if (performance.now() >= giveUpAt)
          throw new DatabaseUnavailable(
            `${this.path} is locked by another process (waited ${BUSY_TIMEOUT_MS / 1000} s)`,
            { cause: error },
          );
      }
      await runtime().sleep(LOCK_RETRY_MS);
    }
  }

  /**
   * One try for the write lock, of `LOCK_TRY_MS`. Reads keep the whole busy timeout: in WAL
   * they wait only on a rare recovery, and one refused would stay in progress, its snapshot
   * kept for every later read.
   */
  private beginImmediate(): void {
    this.main.exec(TRY_FOR_LOCK);
    try {
      this.main.exec("BEGIN IMMEDIATE");
    } finally {
      this.main.exec(WAIT_FOR_LOCK);
    }
  }

  /**
   * Runs `write` in the transaction `lockForWrite` began and commits it, or rolls it back.
   * Synchronous from BEGIN to COMMIT, so no read meets the transaction open.
   */
  private commitNow<T>(write: () => T): T {
    try {
      const result = write();
      this.main.runNow("COMMIT");
      return result;
    } catch (error) {
      if (this.main.raw.inTransaction) this.main.runNow("ROLLBACK");
      throw error;
    }
  }

  private noteWrite(): void {
    this.written = true;
    this.lastWriteAt = performance.now();
  }

  /** Whether anything was written since the last `takeWritten`. */
  get hasWrites(): boolean {
    return this.written;
  }

  /** True once after any write: the WAL may hold frames a checkpoint should move. */
  takeWritten(): boolean {
    const written = this.written;
    this.written = false;
    return written;
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const giveUpAt = lockDeadline();
    return this.writes.run(async () => {
      await this.lockForWrite(giveUpAt);
      this.inTransaction = true;
      try {
        const result = await fn(this.main);
        this.main.runNow("COMMIT");
        this.noteWrite();
        return result;
      } catch (error) {
        if (this.main.raw.inTransaction) this.main.runNow("ROLLBACK");
        throw error;
      } finally {
        this.inTransaction = false;
      }
    });
  }

  batch(statements: Statement[]): Promise<RunResult[]> {
    const giveUpAt = lockDeadline();
    return this.writes.run(async () => {
      await this.lockForWrite(giveUpAt);
      const results = this.commitNow(() =>
        statements.map(({ sql, args }) => this.main.runNow(sql, args)),
      );
      this.noteWrite();
      return results;
    });
  }

  /** A script (migrations, pragmas): it may wait the whole `BUSY_TIMEOUT_MS` at once, as it runs only at open. */
  async exec(sql: string): Promise<void> {
    this.noteWrite();
    await this.writes.run(async () => this.main.exec(sql));
  }

  async checkpoint(): Promise<void> {
    await this.writes.run(async () => {
      this.main.raw.exec("PRAGMA wal_checkpoint(PASSIVE)");
    });
  }

  /** The WAL file's size in bytes (0 when there is none). */
  walSize(): number {
    try {
      return statSync(`${this.path}-wal`).size;
    } catch {
      return 0;
    }
  }

  /**
   * Moves the whole WAL into the database file and empties it, holding this process's
   * writers. Another connection's transaction is waited for in tries of `LOCK_TRY_MS`, the
   * event loop free between them, for up to `waitMs`; then the WAL keeps what it needs.
   */
  async truncateWal(waitMs = 0): Promise<void> {
    const giveUpAt = performance.now() + waitMs;
    await this.writes.run(async () => {
      while (!(await this.truncateOnce()) && performance.now() < giveUpAt)
        await runtime().sleep(LOCK_RETRY_MS);
    });
  }

  /** One try of `truncateWal`: whether it emptied the WAL (SQLite says so in a row, not an error). */
  private async truncateOnce(): Promise<boolean> {
    this.main.exec(TRY_FOR_LOCK);
    let done: Promise<{ busy: number } | undefined>;
    try {
      done = this.main.get<{ busy: number }>("PRAGMA wal_checkpoint(TRUNCATE)");
    } finally {
      this.main.exec(WAIT_FOR_LOCK);
    }
    return (await done)?.busy === 0;
  }

  /**
   * The binding may keep a closed connection alive until its statements are collected,
   * so whoever reads the file next (a copy, a replace) must not rely on the WAL being
   * folded in at close: it is checkpointed first unless `checkpoint` is false.
   */
  async close(checkpoint = true): Promise<void> {
    await this.writes.run(async () => {
      if (checkpoint) {
        try {
          // One short try: a reader elsewhere holds the WAL, which stays valid and is folded in later.
          await this.truncateOnce();
        } catch {
          // the same, refused outright
        }
      }
      this.main.close();
      this.overlapReader?.close();
    });
  }
}
