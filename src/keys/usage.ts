import type { Queryable } from "../db/driver";
import { type KeyUse, type Platform, type Store, storeIncarnation } from "../db/platform";
import { type ReportError, reportToStderr } from "../log";
import { type ApiKey, listKeys } from "./repository";

const MINUTE = 60_000;
/** How long a recorded use waits for others to share its write ("first use within a few seconds"). */
const FLUSH_MS = 2_000;
const MAX_TRACKED = 100_000;

/** Which life of a store a use belongs to (see `storeIncarnation`). */
type StoreLife = Pick<Store, "slug" | "createdAt">;

/**
 * Records each key's `lastUsedAt` at most once a minute, in platform.db (`key_usage`), all
 * keys' uses of the last two seconds in one write. A request never writes to its store's
 * database for this: a store opened for one read is not also dirtied, synced and
 * checkpointed (with thousands of stores, most requests open their store).
 */
export class KeyUsage {
  private recordedMinute = new Map<string, number>();
  private pending = new Map<string, KeyUse>();
  private timer?: ReturnType<typeof setTimeout>;
  private flushing: Promise<void> = Promise.resolve();
  /** Whether the last write failed: a failure is logged once, not every 2 s, until one works. */
  private failing = false;

  constructor(
    private readonly platform: Platform,
    private readonly reportError: ReportError = reportToStderr,
  ) {}

  touch(store: StoreLife, keyId: number, now: number): void {
    const id = `${storeIncarnation(store)}:${keyId}`;
    const minute = Math.floor(now / MINUTE);
    if (this.recordedMinute.get(id) === minute) return;
    if (this.recordedMinute.size >= MAX_TRACKED) this.recordedMinute.clear();
    this.recordedMinute.set(id, minute);
    this.pending.set(id, { slug: store.slug, keyId, usedAt: now });
    this.flushLater();
  }

  private flushLater(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
    this.timer.unref?.();
  }

  /** Writes the uses not written yet (a server's stop calls it last). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const taken = [...this.pending];
    this.pending.clear();
    if (taken.length === 0) return this.flushing;
    const uses = taken.map(([, use]) => use);
    this.flushing = this.flushing
      .then(() => this.platform.recordKeyUse(uses))
      .then(
        () => {
          this.failing = false;
        },
        (error) => {
          if (!this.failing)
            this.reportError(
              `could not record the use of ${uses.length} keys (logged again only after a write works)`,
              error,
            );
          this.failing = true;
          // Tried again with the next write; a later use of the same key replaces its own.
          for (const [id, use] of taken) if (!this.pending.has(id)) this.pending.set(id, use);
          this.flushLater();
        },
      );
    return this.flushing;
  }

  /**
   * A store's keys, each `lastUsedAt` the latest of what platform.db and this process know
   * (not a use of a store deleted before this one was made under its slug).
   */
  async listKeys(db: Queryable, store: StoreLife): Promise<ApiKey[]> {
    const [keys, recorded] = await Promise.all([listKeys(db), this.platform.keyUsage(store.slug)]);
    return this.merged(keys, recorded, store);
  }

  /** `keys` (read elsewhere: a key just deleted), each `lastUsedAt` as `listKeys` gives it. */
  async withLastUse(keys: ApiKey[], store: StoreLife): Promise<ApiKey[]> {
    return this.merged(keys, await this.platform.keyUsage(store.slug), store);
  }

  private merged(keys: ApiKey[], recorded: Map<number, number>, store: StoreLife): ApiKey[] {
    for (const use of this.pending.values())
      if (use.slug === store.slug && use.usedAt >= store.createdAt)
        recorded.set(use.keyId, use.usedAt);
    return keys.map((key) => {
      const usedAt = Math.max(key.lastUsedAt ?? 0, recorded.get(key.id) ?? 0);
      return usedAt === 0 ? key : { ...key, lastUsedAt: usedAt };
    });
  }
}
