import { join } from "node:path";
import type { Db } from "./driver";
import { openDb } from "./open";
import { storeMigrations } from "./schema";

interface Entry {
  db: Promise<Db>;
  leases: number;
}

export interface Lease {
  db: Db;
  release(): void;
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

  constructor(
    readonly dataDir: string,
    private readonly maxOpen = 256,
  ) {}

  async acquire(slug: string): Promise<Lease> {
    let entry = this.entries.get(slug);
    if (entry) {
      this.entries.delete(slug); // re-insert: Map order is recency order
    } else {
      const db = openDb(`file:${storeDbPath(this.dataDir, slug)}`, storeMigrations);
      entry = { db, leases: 0 };
      db.catch(() => this.entries.delete(slug));
    }
    this.entries.set(slug, entry);
    entry.leases++;
    const current = entry;
    try {
      const db = await current.db;
      this.evictIdle();
      let released = false;
      return {
        db,
        release: () => {
          if (released) return;
          released = true;
          current.leases--;
        },
      };
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

  get openCount(): number {
    return this.entries.size;
  }

  private evictIdle(): void {
    if (this.entries.size <= this.maxOpen) return;
    for (const [slug, entry] of this.entries) {
      if (this.entries.size <= this.maxOpen) break;
      if (entry.leases > 0) continue;
      this.entries.delete(slug);
      entry.db.then((db) => db.close()).catch(() => {});
    }
  }

  /** Checkpoints every open database on a timer, keeping the WAL bounded off the request path. */
  startCheckpoints(intervalMs = 1000): void {
    this.checkpointTimer = setInterval(() => {
      for (const entry of this.entries.values()) {
        entry.db.then((db) => db.checkpoint()).catch(() => {});
      }
    }, intervalMs);
    this.checkpointTimer.unref?.();
  }

  async close(): Promise<void> {
    clearInterval(this.checkpointTimer);
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(entries.map((e) => e.db.then((db) => db.close()).catch(() => {})));
  }
}
