import { ClientClosed } from "../errors";
import type { ReportError } from "../log";
import { runtime } from "../runtime/runtime";
import { CheckpointSchedule } from "./checkpoint-schedule";
import { type Db, fileNamed, StoreDatabaseMissing } from "./driver";
import { DESCRIPTORS_PER_STORE, FileLocation, type Location } from "./location";
import { storeMigrations } from "./migrations";
import { DESCRIPTORS_PER_CONNECTION, unreleasedConnections, youngCollected } from "./native";

interface Entry {
  db: Promise<Db>;
  /** The database once it is open. */
  open?: Db;
  leases: number;
  /** Called when the last lease is released (see `closeStore`). */
  onReleased?: () => void;
  /** Leases waiting for the open whose client has hung up since. */
  abandoned: number;
  /** Which file it opened (device and inode), on files: see `StoreFileWatch`. */
  fileId?: string | null;
}

/**
 * `background`: housekeeping or a scrape, neither a use of the store nor a reason to keep
 * it open. `hungUp`: the request's client went away (its queued open is then skipped when
 * nobody else waits for it).
 */
interface Use {
  background?: boolean;
  hungUp?: AbortSignal;
}

export interface Lease {
  db: Db;
  release(): void;
}

/** Descriptors kept for everything else: sockets, platform.db, the checkpoint thread. */
const RESERVED_DESCRIPTORS = 1024;

/**
 * Past this, open stores cost more memory than reopening them costs time: an open store
 * holds ~250 KB, mostly SQLite's own per connection (lookaside, the page cache's first
 * pages, the WAL index; measured: 611 MB RSS with 2,000 stores open). A host rotating
 * over 2,000 stores then finds every one open; `--max-open-stores` trades that for memory.
 */
const MAX_DEFAULT_OPEN_STORES = 2_048;
/**
 * Stores a pool may always hold, whatever the open-files limit: below 1,024 + 2 × 4 × 16
 * descriptors a server is short of them anyway, and `serve` says so at start.
 */
export const FEWEST_OPEN_STORES = 16;
/**
 * Closed connections left to the collector at most (memory, like descriptors, is invisible
 * to it; never more than the pool's size), and of those, the ones that cached no statement
 * (src/db/native.ts). A young collection (~4 ms) frees these and finalises their closes in
 * one go, so 128 keeps that batch short; a full one (~25 ms) frees all, so it waits for
 * 512. Against a full one at 128 (pinned, the pool left by a Zipf run): the hot store's
 * p99 under cold churn 14.0–15.7 ms vs 45.9–55.8 ms (8 ms alone).
 */
const MAX_UNCOLLECTED = 512;
const MAX_UNCOLLECTED_UNCACHED = 128;

/**
 * The pool size that fits the process's open-files limit: half of it for open stores,
 * the other half left to closed connections waiting for the collector (at most one per
 * open store).
 */
export function defaultMaxOpenStores(
  openFilesLimit: number,
  descriptorsPerStore = DESCRIPTORS_PER_STORE,
): number {
  const budget = Math.max(openFilesLimit - RESERVED_DESCRIPTORS, 0) / 2;
  const fits = Math.floor(budget / descriptorsPerStore);
  return Math.min(Math.max(fits, FEWEST_OPEN_STORES), MAX_DEFAULT_OPEN_STORES);
}

/**
 * The most stores an open-files limit holds beside the descriptors kept for everything
 * else and the closed connections waiting for the collector.
 */
export function maxOpenStoresFitting(openFilesLimit: number, descriptorsPerStore: number): number {
  if (descriptorsPerStore === 0) return Number.POSITIVE_INFINITY;
  const room = openFilesLimit - RESERVED_DESCRIPTORS;
  // `n` open stores leave up to min(n, MAX_UNCOLLECTED) closed connections waiting.
  const few = Math.floor(room / (descriptorsPerStore + DESCRIPTORS_PER_CONNECTION));
  if (few <= MAX_UNCOLLECTED) return Math.max(few, 0);
  const waiting = MAX_UNCOLLECTED * DESCRIPTORS_PER_CONNECTION;
  return Math.max(Math.floor((room - waiting) / descriptorsPerStore), 0);
}

/**
 * A turn of the event loop: sockets are read before the callback runs. Not `setTimeout(0)`,
 * which waits ~1 ms under Bun (measured 1.09 ms; `setImmediate` 1.3 µs): queued opens
 * spent as long waiting for it as opening.
 */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * How long closing a store waits for the requests holding it: a client sending its body
 * slowly must not hold up a store's deletion for long.
 */
const CLOSE_WAIT_MS = 5000;

/** Resolves when no lease on `entry` is left, or after `ms`. */
function untilLeasesReleased(entry: Entry, ms: number): Promise<void> {
  if (entry.leases === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    entry.onReleased = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

/** The entry's database once open; meanwhile counted as abandoned if its client hangs up. */
async function openedFor(entry: Entry, hungUp: AbortSignal | undefined): Promise<Db> {
  if (!hungUp) return entry.db;
  let counted = false;
  const hangUp = () => {
    counted = true;
    entry.abandoned++;
  };
  if (hungUp.aborted) hangUp();
  else hungUp.addEventListener("abort", hangUp, { once: true });
  try {
    return await entry.db;
  } finally {
    hungUp.removeEventListener("abort", hangUp);
    if (counted) entry.abandoned--;
  }
}

/** A lease already counted in `entry.leases`; releasing it twice counts once. */
function leaseOf(entry: Entry, db: Db): Lease {
  let released = false;
  return {
    db,
    release: () => {
      if (released) return;
      released = true;
      entry.leases--;
      if (entry.leases === 0) entry.onReleased?.();
    },
  };
}

export { storeDbPath } from "./location";

/**
 * Open store databases, at most `maxOpen` idle ones (least recently used closed first),
 * so a server with 10,000 stores does not hold 10,000 handles. A database in use by a
 * request (leased) is never closed under it.
 *
 * Opening is cheap: one connection (src/db/native.ts), and the schema version is read
 * only the first time this process opens a store. Closing runs no
 * checkpoint. The binding frees a closed connection's descriptors only when its
 * statements are collected (src/db/native.ts); the collector does not count descriptors
 * as memory pressure, so when closed connections waiting for it could use up the half
 * of the descriptors set aside for them (or hold too much memory), a collection is asked
 * for: at 10,000 stores in rotation about once per 128 closes, a young-generation one
 * (~4 ms) as long as most of them never cached a statement.
 */
export class StorePool {
  private entries = new Map<string, Entry>();
  private checkpoints: CheckpointSchedule | null = null;
  private collectionPending = false;
  /** Stores whose schema this process has seen current: reopening them reads no version. */
  private current = new Set<string>();
  /** The last key of `entries` (the most recently used store), so a hit on it moves nothing. */
  private mostRecent: string | undefined;
  private missCount = 0;
  /** The last open queued (see `openStore`). */
  private opening: Promise<void> = Promise.resolve();
  /** Stores leased since the last `takeUsed`. */
  private usedSince = new Set<string>();
  /** Stores whose file was removed or replaced under this process (see `retire`). */
  private retired = new Map<string, StoreDatabaseMissing>();
  readonly location: Location;

  /** Closed connections that may wait for the collector before descriptors run short. */
  private readonly uncollectedAllowed: number;

  /**
   * `where`: a data directory, or any `Location` (a libSQL server); `openFilesLimit`: the
   * process's, half of which closed connections waiting for the collector may hold.
   */
  constructor(
    where: string | Location,
    readonly maxOpen = 256,
    openFilesLimit: number | null = null,
  ) {
    this.location = typeof where === "string" ? new FileLocation(where) : where;
    this.uncollectedAllowed =
      openFilesLimit === null
        ? Number.POSITIVE_INFINITY
        : Math.max(Math.floor(openFilesLimit / 2 / DESCRIPTORS_PER_CONNECTION), maxOpen);
  }

  /** Requests that found their store closed, since start: each opened its database. */
  get misses(): number {
    return this.missCount;
  }

  /**
   * Opens a store's database. A file opens synchronously for a millisecond or more, so
   * files open one at a time, each after the event loop has had a turn: a burst of cold
   * stores must not hold up requests to the stores already open. (A libSQL server's opens
   * are network round trips that block nothing; they are not queued.)
   */
  private openStore(
    slug: string,
    migrations: typeof storeMigrations,
    wanted: () => boolean,
  ): Promise<Db> {
    if (this.location.remote) return this.openNow(slug, migrations);
    const opened = this.opening.then(yieldToEventLoop).then(() => {
      if (!wanted()) throw new ClientClosed("every client waiting for this store hung up");
      return this.openNow(slug, migrations);
    });
    this.opening = opened.then(
      () => {},
      () => {},
    );
    return opened;
  }

  /**
   * Opens a store's database. One that does not exist is refused, never made anew: a
   * registered store whose file is missing is unavailable (503; a command says so), not
   * silently empty, and no empty file lands where its restored file will go.
   */
  private async openNow(slug: string, migrations: typeof storeMigrations): Promise<Db> {
    if (!(await this.location.storeExists(slug))) throw this.location.storeMissing(slug);
    return this.location.openStore(slug, migrations);
  }

  /**
   * A lease on the store's database when it is already open (the common case), without
   * waiting; undefined when it has yet to be opened (then `acquire`).
   */
  leaseOpen(slug: string, use: Use = {}): Lease | undefined {
    const entry = this.entries.get(slug);
    if (!entry?.open) return undefined;
    this.markUsed(slug, entry, use);
    entry.leases++;
    this.evictIdle();
    return leaseOf(entry, entry.open);
  }

  async acquire(slug: string, use: Use = {}): Promise<Lease> {
    const open = this.leaseOpen(slug, use);
    if (open) return open;
    let entry = this.entries.get(slug);
    if (!entry) {
      const retired = this.retired.get(slug);
      if (retired) throw retired;
      const migrations = this.current.has(slug) ? [] : storeMigrations;
      const created = { leases: 0, abandoned: 0 } as Entry;
      const db = this.openStore(slug, migrations, () => created.leases > created.abandoned);
      created.db = db;
      this.missCount++;
      db.then(
        (opened) => {
          created.open = opened;
          created.fileId = this.location.storeFileId?.(slug);
          this.current.add(slug);
        },
        () => {
          if (this.entries.get(slug) === created) this.entries.delete(slug);
        },
      );
      entry = created;
    }
    this.markUsed(slug, entry, use);
    entry.leases++;
    const current = entry;
    try {
      const db = await openedFor(current, use.hungUp);
      this.evictIdle();
      return leaseOf(current, db);
    } catch (error) {
      current.leases--;
      throw error;
    }
  }

  /**
   * Runs `fn` with the store's database leased for its duration. Background work on a
   * store that was closed closes it again after, so it displaces no store requests use.
   */
  async use<T>(slug: string, fn: (db: Db) => Promise<T>, use: Use = {}): Promise<T> {
    const wasOpen = this.entries.has(slug);
    const lease = await this.acquire(slug, use);
    try {
      return await fn(lease.db);
    } catch (error) {
      throw fileNamed(this.location.storeName(slug), error);
    } finally {
      lease.release();
      if (use.background && !wasOpen && this.entries.get(slug)?.leases === 0)
        await this.closeStore(slug);
    }
  }

  /** Moves the store to the end of `entries`: Map order is recency order. */
  private markUsed(slug: string, entry: Entry, { background }: Use): void {
    if (background && this.entries.has(slug)) return;
    if (!background) this.usedSince.add(slug);
    if (this.mostRecent === slug && this.entries.has(slug)) return;
    this.entries.delete(slug);
    this.entries.set(slug, entry);
    this.mostRecent = slug;
  }

  /** The stores leased since the last call (only these can have new rows for housekeeping). */
  takeUsed(): Set<string> {
    const used = this.usedSince;
    this.usedSince = new Set();
    return used;
  }

  get openCount(): number {
    return this.entries.size;
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
      entry.db.then((db) => this.closeDb(db, !this.checkpoints?.handles(db))).catch(() => {});
    }
  }

  /** An eviction leaves the WAL to the checkpoint thread when it has one; other closes fold it in. */
  private async closeDb(db: Db, checkpoint: boolean): Promise<void> {
    this.checkpoints?.closing(db, checkpoint);
    await db.close(checkpoint);
    this.collectIfDescriptorsRunLow();
  }

  /**
   * A young-generation collection once enough closed connections that cached no statement
   * wait (stores touched a few times), a full one once too many wait in all.
   */
  private collectIfDescriptorsRunLow(): void {
    const limit = Math.min(this.maxOpen, MAX_UNCOLLECTED);
    const { cached, uncached, all } = unreleasedConnections();
    const young = uncached >= Math.min(limit, MAX_UNCOLLECTED_UNCACHED);
    // Uncached ones a young collection left (their statements promoted) count only here.
    const runningOut = all >= this.uncollectedAllowed;
    if (this.collectionPending || (!young && !runningOut && cached + uncached < limit)) return;
    this.collectionPending = true;
    setTimeout(() => {
      this.collectionPending = false;
      if (young && !runningOut) runtime().collectYoungGarbage();
      else runtime().collectGarbage();
      youngCollected();
    }, 0);
  }

  /**
   * Checkpoints written databases on a timer (src/db/checkpoint-schedule.ts): the open
   * stores', and `alsoOpen`'s (platform.db: its connections, like the stores', never
   * checkpoint by themselves).
   */
  startCheckpoints(intervalMs = 1000, reportError?: ReportError, alsoOpen: Db[] = []): void {
    const others = alsoOpen.map((db) => Promise.resolve(db));
    this.checkpoints = CheckpointSchedule.start(
      () => [...[...this.entries.values()].map((e) => e.db), ...others],
      intervalMs,
      reportError,
    );
  }

  /** The open stores and the file each opened (device and inode), where the location has files. */
  openFiles(): Array<{ slug: string; fileId: string }> {
    const files: Array<{ slug: string; fileId: string }> = [];
    for (const [slug, entry] of this.entries)
      if (entry.fileId) files.push({ slug, fileId: entry.fileId });
    return files;
  }

  /** Whether the store is still open on the file `openFiles` gave. */
  isOpenOn(slug: string, fileId: string): boolean {
    return this.entries.get(slug)?.fileId === fileId;
  }

  /**
   * Closes one store's database (its store was deleted or replaced) once the requests
   * holding it are done (at most `CLOSE_WAIT_MS`): closed under one, a write acknowledged
   * meanwhile could miss the checkpoint a deletion archives. With `meanwhile` (the file
   * moved away or into place), the store cannot be opened until that has run: a connection
   * opened in between would keep the file moved away.
   */
  async closeStore(slug: string, meanwhile?: () => unknown): Promise<void> {
    this.retired.delete(slug); // deleted or made anew through the server: its file is ours
    if (!meanwhile) return this.closeEntry(slug);
    // Background work (mail, housekeeping) must not open the file while it is moved.
    const name = this.location.storeName(slug);
    this.retired.set(slug, new StoreDatabaseMissing(`${name} is being moved`));
    try {
      await this.closeEntry(slug);
      await meanwhile();
    } finally {
      this.retired.delete(slug);
    }
  }

  private async closeEntry(slug: string): Promise<void> {
    const entry = this.entries.get(slug);
    if (!entry) return;
    this.entries.delete(slug);
    if (this.mostRecent === slug) this.mostRecent = undefined;
    await untilLeasesReleased(entry, CLOSE_WAIT_MS);
    await entry.db.then((db) => this.closeDb(db, true)).catch(() => {});
  }

  /**
   * Closes a store whose file was removed or replaced under this process, and opens nothing
   * on its path again until a restart: the old connection's WAL and shared-memory files
   * keep their names there until the binding lets them go, and a connection to a new file
   * would read that WAL as its own (a restored file then reads, and is written, corrupt).
   */
  async retire(slug: string, why: string): Promise<void> {
    if (!this.entries.has(slug)) return;
    // Marked first: a request arriving while the old connection waits for its leases must
    // not open the new file beside it.
    this.retired.set(slug, new StoreDatabaseMissing(why));
    await this.closeEntry(slug);
  }

  async close(): Promise<void> {
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(
      entries.map((e) => e.db.then((db) => this.closeDb(db, true)).catch(() => {})),
    );
    await this.checkpoints?.stop();
    this.checkpoints = null;
  }
}
