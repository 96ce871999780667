import { existsSync } from "node:fs";
import { join } from "node:path";
import { ApiError } from "../errors";
import { Checkpointer, walLimitBytes } from "./checkpointer";
import type { Db } from "./driver";
import { NativeDb } from "./native";
import { openDb } from "./open";
import { storeMigrations } from "./schema";
import type { ReportError } from "../log";
import { runtime } from "../runtime/runtime";

interface Entry {
  db: Promise<Db>;
  /** The database once it is open. */
  open?: Db;
  leases: number;
}

export interface Lease {
  db: Db;
  release(): void;
}

/**
 * The `libsql` binding frees a closed connection's file descriptors (database, WAL, shm)
 * only when its prepared statements are garbage-collected: it has no finalize, and the
 * collector does not count descriptors as memory pressure. A server cycling through
 * thousands of stores ran out of descriptors ("Unable to open connection … : 14", found
 * by the bench with 10,000 stores), so a full collection runs after this many closes
 * (~25 ms each, off the request that caused it).
 */
const CLOSES_PER_COLLECTION = 64;

/** A lease already counted in `entry.leases`; releasing it twice counts once. */
function leaseOf(entry: Entry, db: Db): Lease {
  let released = false;
  return {
    db,
    release: () => {
      if (released) return;
      released = true;
      entry.leases--;
    },
  };
}

export const storeDbPath = (dataDir: string, slug: string) => join(dataDir, "stores", `${slug}.db`);

/**
 * Open store databases, at most `maxOpen` idle ones (least recently used closed first),
 * so a server with 10,000 stores does not hold 10,000 handles. A database in use by a
 * request (leased) is never closed under it.
 */
export class StorePool {
  private entries = new Map<string, Entry>();
  private checkpointTimer: ReturnType<typeof setInterval> | undefined;
  private checkpointer: Checkpointer | null = null;
  private closesSinceCollection = 0;
  /** Acquires that had to open the database (for metrics). */
  private missCount = 0;
  /** The last key of `entries` (the most recently used store), so a hit on it moves nothing. */
  private mostRecent: string | undefined;
  /**
   * Whether a store's first use creates its database file. A server turns this off: a
   * registered store whose file is missing is unavailable (503), never silently empty.
   */
  createMissing = true;

  constructor(
    readonly dataDir: string,
    private readonly maxOpen = 256,
  ) {}

  /**
   * A lease on the store's database when it is already open (the common case), without
   * waiting; undefined when it has yet to be opened (then `acquire`).
   */
  leaseOpen(slug: string): Lease | undefined {
    const entry = this.entries.get(slug);
    if (!entry?.open) return undefined;
    this.markUsed(slug, entry);
    entry.leases++;
    this.evictIdle();
    return leaseOf(entry, entry.open);
  }

  async acquire(slug: string): Promise<Lease> {
    const open = this.leaseOpen(slug);
    if (open) return open;
    let entry = this.entries.get(slug);
    if (!entry) {
      this.missCount++;
      const path = storeDbPath(this.dataDir, slug);
      const db =
        this.createMissing || existsSync(path)
          ? openDb(`file:${path}`, storeMigrations)
          : Promise.reject(new ApiError("store_unavailable", "This store is unavailable right now; try again later."));
      const created: Entry = { db, leases: 0 };
      db.then(
        (opened) => (created.open = opened),
        () => this.entries.delete(slug),
      );
      entry = created;
    }
    this.markUsed(slug, entry);
    entry.leases++;
    const current = entry;
    try {
      const db = await current.db;
      this.evictIdle();
      return leaseOf(current, db);
    } catch (error) {
      current.leases--;
      throw error;
    }
  }

  /** Runs `fn` with the store's database leased for its duration. */
  async use<T>(slug: string, fn: (db: Db) => Promise<T>): Promise<T> {
    const lease = await this.acquire(slug);
    try {
      return await fn(lease.db);
    } finally {
      lease.release();
    }
  }

  /** Moves the store to the end of `entries`: Map order is recency order. */
  private markUsed(slug: string, entry: Entry): void {
    if (this.mostRecent === slug && this.entries.has(slug)) return;
    this.entries.delete(slug);
    this.entries.set(slug, entry);
    this.mostRecent = slug;
  }

  get openCount(): number {
    return this.entries.size;
  }

  get misses(): number {
    return this.missCount;
  }

  /** The stores whose database is open now (for metrics). */
  openSlugs(): string[] {
    return [...this.entries].filter(([, entry]) => entry.open).map(([slug]) => slug);
  }

  private evictIdle(): void {
    if (this.entries.size <= this.maxOpen) return;
    for (const [slug, entry] of this.entries) {
      if (this.entries.size <= this.maxOpen) break;
      if (entry.leases > 0) continue;
      this.entries.delete(slug);
      entry.db.then((db) => this.closeDb(db)).catch(() => {});
    }
  }

  private async closeDb(db: Db): Promise<void> {
    if (db instanceof NativeDb) this.checkpointer?.forget(db.path);
    await db.close();
    if (++this.closesSinceCollection >= CLOSES_PER_COLLECTION) {
      this.closesSinceCollection = 0;
      setTimeout(() => runtime().collectGarbage(), 0);
    }
  }

  /**
   * Checkpoints, on a timer, every open database written since the last tick, keeping the
   * WAL bounded. Local files are checkpointed on a worker thread so the copy and its fsync
   * never stall requests; without the worker (or for remote databases) on this thread.
   */
  startCheckpoints(intervalMs = 1000, reportError?: ReportError): void {
    this.checkpointer = Checkpointer.start(reportError);
    this.checkpointTimer = setInterval(() => void this.checkpointWritten(), intervalMs);
    this.checkpointTimer.unref?.();
  }

  private async checkpointWritten(): Promise<void> {
    const settled = await Promise.allSettled([...this.entries.values()].map((e) => e.db));
    const paths: string[] = [];
    const walLimit = walLimitBytes();
    for (const result of settled) {
      if (result.status !== "fulfilled") continue;
      const db = result.value;
      // Under sustained writes passive checkpoints may never bring the WAL back to its
      // start, so it grows without bound; past the limit one checkpoint empties it.
      if (db instanceof NativeDb && db.walSize() > walLimit) {
        db.truncateWal().catch(() => {});
        continue;
      }
      if (db instanceof NativeDb && this.checkpointer?.alive) {
        if (db.takeWritten()) paths.push(db.path);
      } else {
        db.checkpoint().catch(() => {});
      }
    }
    this.checkpointer?.checkpoint(paths);
  }

  async close(): Promise<void> {
    clearInterval(this.checkpointTimer);
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(entries.map((e) => e.db.then((db) => this.closeDb(db)).catch(() => {})));
    await this.checkpointer?.stop();
    this.checkpointer = null;
  }
}
