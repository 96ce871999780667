import { runtime } from "../runtime/runtime";
import type { ClientDb } from "./client";
import {
  type Args,
  DatabaseUnavailable,
  type Db,
  type Queryable,
  REMOTE_DEADLINE_MS,
  type Row,
  type Statement,
} from "./driver";
import { type Connection, openReader } from "./native";
import type { ReplicaCall, ReplicaReply, ReplicaRequest } from "./replica-worker";

/** How far behind the primary a replica may read: writes made elsewhere show within this. */
const REPLICA_STALENESS_MS = 1000;

/** After a sync failed, reads go to the server for this long before the replica is synced again. */
const SYNC_RETRY_MS = 1000;

/** Where a store's replica syncs from and lives. */
export interface ReplicaSource {
  syncUrl: string;
  authToken: string | null;
  path: string;
}

/**
 * The replicas' thread (src/db/replica-worker.ts), started at the first replica. A call a
 * request waits for is given up after `REMOTE_DEADLINE_MS` (the thread may be waiting on a
 * server that stopped answering); making a replica, whose first sync copies the whole
 * database, is not (no request waits for it). Any failure is `DatabaseUnavailable`.
 */
class ReplicaThread {
  private worker = runtime().startWorker("db/replica-worker.ts");
  private lastId = 0;
  private waiting = new Map<number, (error: string | null) => void>();

  constructor() {
    this.worker.onmessage = ({ data }: MessageEvent<ReplicaReply>) => {
      this.waiting.get(data.id)?.(data.error);
      this.waiting.delete(data.id);
    };
  }

  call(request: ReplicaCall, { deadline = true } = {}): Promise<void> {
    const id = ++this.lastId;
    return new Promise((resolve, reject) => {
      const failed = (why: string) =>
        reject(
          new DatabaseUnavailable(
            `the replica at ${request.path} could not ${request.type}: ${why}`,
          ),
        );
      const timer = !deadline
        ? undefined
        : setTimeout(() => {
            this.waiting.delete(id);
            reject(new ReplicaUnanswered(request));
          }, REMOTE_DEADLINE_MS);
      this.waiting.set(id, (error) => {
        clearTimeout(timer);
        if (error === null) resolve();
        else failed(error);
      });
      this.worker.postMessage({ ...request, id } satisfies ReplicaRequest);
    });
  }
}

/** A call to the replicas' thread that the libSQL server left unanswered past the deadline. */
class ReplicaUnanswered extends DatabaseUnavailable {
  constructor(request: ReplicaCall) {
    super(
      `the replica at ${request.path} could not ${request.type}: no answer from the libSQL server within ${REMOTE_DEADLINE_MS / 1000} s`,
    );
  }
}

let thread: ReplicaThread | undefined;

/**
 * A store on a libSQL server whose store-API reads come from a local embedded replica.
 * libsql fills the replica's file (`sync`); reads go through a plain read-only
 * connection on that file, whose statements are prepared once (the replica's own
 * connection does not rebind a statement's arguments between calls, and preparing the
 * order query each time cost more than the rest of a GET).
 *
 * As a `Db` it is the primary: every statement, transaction and read goes to the server,
 * so keys, mail, housekeeping and the management API see what is committed. Its
 * `requestView` is what a store API request gets: the same writes, but reads from the
 * replica file, brought up to date first when this node wrote since the last sync (a
 * client reads its own writes) or when the last sync is older than `REPLICA_STALENESS_MS`
 * (writes by another node or a command show within that). The replica is made in the
 * background from the first such read on (a store opened only for background work never
 * copies its data); until it is, reads go to the server, so a big store's first copy
 * never holds up its requests.
 */
export class ReplicaDb implements Db {
  readonly requestView: Db;
  /** The reads' connection on the replica's file, once the replica is made. */
  private reader: Connection | null = null;
  /** The replica being made (null before the first read, and after a failure: the next read tries again). */
  private making: Promise<void> | null = null;
  private closed = false;
  /** Whether the replicas' thread was asked to make this replica (then it is asked to remove it at close). */
  private replicaAsked = false;
  /** Writes made through this object; `syncedWrites` of them are in the replica. */
  private writes = 0;
  private syncedWrites = 0;
  private syncedAt = Number.NEGATIVE_INFINITY;
  private syncing: Promise<void> | null = null;
  private syncFailedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly primary: ClientDb,
    private readonly source: ReplicaSource,
  ) {
    this.requestView = {
      readsMayLag: true,
      all: async (sql, args) => (await this.readView()).all(sql, args),
      get: async (sql, args) => (await this.readView()).get(sql, args),
      run: (sql, args) => this.run(sql, args),
      transaction: (fn) => this.transaction(fn),
      batch: (statements) => this.batch(statements),
      exec: (sql) => this.exec(sql),
      checkpoint: () => this.checkpoint(),
      walSize: () => this.walSize(),
      truncateWal: () => this.truncateWal(),
      close: () => this.close(),
    } as Db;
  }

  all<T = Row>(sql: string, args?: Args) {
    return this.primary.all<T>(sql, args);
  }
  get<T = Row>(sql: string, args?: Args) {
    return this.primary.get<T>(sql, args);
  }
  run(sql: string, args?: Args) {
    return this.written(this.primary.run(sql, args));
  }
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.written(this.primary.transaction(fn));
  }
  batch(statements: Statement[]) {
    return this.written(this.primary.batch(statements));
  }
  exec(sql: string): Promise<void> {
    return this.written(this.primary.exec(sql));
  }
  async checkpoint(): Promise<void> {}
  walSize(): number {
    return 0;
  }
  async truncateWal(): Promise<void> {}

  async close(): Promise<void> {
    await this.primary.close();
    this.closed = true;
    await this.syncing?.catch(() => {});
    this.reader?.close();
    this.reader = null;
    if (this.replicaAsked)
      await thread?.call({ type: "close", path: this.source.path }).catch(() => {});
  }

  /**
   * Where a request's read goes: the replica once it is made and up to date; the server
   * until then, and while the replica cannot be synced (the server has every write; when
   * it cannot answer either, the read fails as any read from it does).
   */
  private async readView(): Promise<Queryable> {
    if (this.reader) return this.upToDate(this.reader);
    if (!this.making)
      this.making = this.makeReplica().catch(() => {
        this.making = null; // the next read tries again
      });
    return this.primary;
  }

  /**
   * Makes the replica and fills it (on the replicas' thread, however long the first copy
   * takes), then opens the reads' connection on its file.
   */
  private async makeReplica(): Promise<void> {
    const { syncUrl, authToken, path } = this.source;
    thread ??= new ReplicaThread();
    this.replicaAsked = true;
    await thread.call({ type: "open", path, syncUrl, authToken }, { deadline: false });
    await this.sync({ deadline: false });
    if (!this.closed) this.reader = openReader(path);
  }

  private async written<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } finally {
      this.writes++;
    }
  }

  /**
   * The replica brought up to date, or the server while the replica cannot be synced. A
   * sync the server left unanswered fails the read: asking the same server again would
   * double the wait, past the deadline a client's connection is kept open for.
   */
  private async upToDate(reader: Connection): Promise<Queryable> {
    if (performance.now() - this.syncFailedAt < SYNC_RETRY_MS) return this.primary;
    try {
      return await this.catchUp(reader);
    } catch (error) {
      this.syncFailedAt = performance.now();
      if (error instanceof ReplicaUnanswered) throw error;
      return this.primary;
    }
  }

  /**
   * The reads' connection, once the replica holds every write this node made before the
   * read arrived, from a sync begun at most `REPLICA_STALENESS_MS` before it (two syncs at
   * most: a sync in flight may have begun before one of those writes).
   */
  private async catchUp(reader: Connection): Promise<Connection> {
    const writes = this.writes;
    const freshFrom = performance.now() - REPLICA_STALENESS_MS;
    while (this.syncedWrites < writes || this.syncedAt < freshFrom) {
      this.syncing ??= this.sync().finally(() => {
        this.syncing = null;
      });
      await this.syncing;
    }
    return reader;
  }

  private async sync(options?: { deadline: boolean }): Promise<void> {
    const writes = this.writes;
    const startedAt = performance.now();
    await thread?.call({ type: "sync", path: this.source.path }, options);
    this.syncedWrites = writes;
    this.syncedAt = startedAt;
  }
}
