import { rmSync } from "node:fs";
import Database from "libsql";
import type { ClientDb } from "./client";
import type { Args, Db, Queryable, Row } from "./driver";
import { libsqlNative } from "./libsql-native";
import { type Connection, noteClosed, openReader } from "./native";

/** How far behind the primary a replica may read: writes made elsewhere show within this. */
const REPLICA_STALENESS_MS = 1000;

/** The files libsql keeps for a replica at `path`. */
const REPLICA_FILES = ["", "-wal", "-shm", "-info", "-client_wal_index"];

function removeReplica(path: string): void {
  for (const suffix of REPLICA_FILES) rmSync(path + suffix, { force: true });
}

let native: ReturnType<typeof libsqlNative> | undefined;

/** Where a store's replica syncs from and lives. */
export interface ReplicaSource {
  syncUrl: string;
  authToken: string | null;
  path: string;
}

/** The replica's own connection (libsql syncs through it) and the reads' connection. */
interface ReplicaFiles {
  replica: InstanceType<typeof Database>;
  reader: Connection;
}

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
 * (writes by another node or a command show within that). The replica is made at the
 * first such read, so a store opened only for background work never copies its data.
 */
export class ReplicaDb implements Db {
  readonly requestView: Db;
  private files: ReplicaFiles | null = null;
  /** Writes made through this object; `syncedWrites` of them are in the replica. */
  private writes = 0;
  private syncedWrites = 0;
  private syncedAt = Number.NEGATIVE_INFINITY;
  private syncing: Promise<void> | null = null;

  constructor(
    private readonly primary: ClientDb,
    private readonly source: ReplicaSource,
  ) {
    this.requestView = {
      all: async (sql, args) => (await this.catchUp()).all(sql, args),
      get: async (sql, args) => (await this.catchUp()).get(sql, args),
      run: (sql, args) => this.run(sql, args),
      transaction: (fn) => this.transaction(fn),
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
    await this.syncing?.catch(() => {});
    if (!this.files) return;
    this.files.reader.close();
    this.files.replica.close();
    noteClosed(this.files.replica);
    this.files = null;
    removeReplica(this.source.path);
  }

  /**
   * A fresh replica (any earlier file at its path is removed: a replica lives only while
   * its store is open). libsql connects to sqld here, blocking the thread for a few ms.
   */
  private openFiles(): ReplicaFiles {
    const { syncUrl, authToken, path } = this.source;
    removeReplica(path);
    const replica = new Database(path, {
      syncUrl,
      authToken: authToken ?? undefined,
      readYourWrites: false,
    } as ConstructorParameters<typeof Database>[1]);
    try {
      this.files = { replica, reader: openReader(path) };
    } catch (error) {
      replica.close();
      noteClosed(replica);
      throw error;
    }
    return this.files;
  }

  private async written<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } finally {
      this.writes++;
    }
  }

  /**
   * The reads' connection, once the replica holds every write this node made before the
   * read arrived, from a sync begun at most `REPLICA_STALENESS_MS` before it (two syncs at
   * most: a sync in flight may have begun before one of those writes).
   */
  private async catchUp(): Promise<Connection> {
    const files = this.files ?? this.openFiles();
    const writes = this.writes;
    const freshFrom = performance.now() - REPLICA_STALENESS_MS;
    while (this.syncedWrites < writes || this.syncedAt < freshFrom) {
      this.syncing ??= this.sync(files).finally(() => {
        this.syncing = null;
      });
      await this.syncing;
    }
    return files.reader;
  }

  private async sync({ replica }: ReplicaFiles): Promise<void> {
    const writes = this.writes;
    const startedAt = performance.now();
    native ??= libsqlNative();
    await native.databaseSyncAsync.call((replica as unknown as { db: unknown }).db);
    this.syncedWrites = writes;
    this.syncedAt = startedAt;
  }
}
