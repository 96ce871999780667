import type { Queryable } from "./db/driver";
import { IDEMPOTENCY_TTL_MS } from "./db/idempotency";
import type { Platform } from "./db/platform";
import type { StorePool } from "./db/pool";
import type { Logger } from "./log";
import { errorFields } from "./log";
import type { StoreRegistry } from "./registry";
import { runtime } from "./runtime/runtime";

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * A deleted or expired key is listed this long after it ended, then its row goes: a
 * loop of creates and deletes (or rolls) would otherwise grow a store's key rows, and
 * its key lists, without bound.
 */
export const KEEP_ENDED_KEYS_DAYS = 90;
/** When a key ended (deleted, else expired; null while it works without end). */
const KEY_ENDED_AT = "coalesce(deleted_at, expires_at)";
/**
 * The keys housekeeping may delete: the newest key's row always stays, since ids are
 * SQLite's largest rowid plus one and a key's id must never be given to another key.
 */
const NOT_NEWEST_KEY = "id < (SELECT max(id) FROM api_keys)";
/** A sweep is background work: with 10,000 stores it spreads over a minute instead of competing with requests. */
const PAUSE_BETWEEN_STORES_MS = 5;

export interface HousekeepingPolicy {
  /** Sent mail older than this many days is deleted. */
  keepSentMailDays: number;
  /** Rows deleted per statement: a short write lock, then other writers get their turn. */
  batch: number;
  /** Minutes between sweeps over every store (the first one starts with the server). */
  everyMinutes: number;
}

export const DEFAULT_HOUSEKEEPING: HousekeepingPolicy = {
  keepSentMailDays: 30,
  batch: 500,
  everyMinutes: 60,
};

/** What one sweep deleted, summed over the stores. */
export interface Purged {
  sentMail: number;
  idempotency: number;
  endedKeys: number;
}

/** What one store's purge deleted. */
export interface StorePurged extends Purged {
  /** The deleted keys' ids: their last uses, kept in platform.db, go too. */
  endedKeyIds: number[];
}

/** Deletes up to `batch` rows of `table` matching `where`; returns how many it deleted. */
async function deleteBatch(
  db: Queryable,
  table: string,
  where: string,
  args: (number | string)[],
  batch: number,
): Promise<number> {
  const result = await db.run(
    `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where} LIMIT ?)`,
    [...args, batch],
  );
  return result.changes;
}

/** Deletes in batches until none is left, yielding to requests between batches. */
async function deleteAll(
  db: Queryable,
  table: string,
  where: string,
  args: (number | string)[],
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch(db, table, where, args, batch);
    total += deleted;
    if (deleted < batch) return total;
    await runtime().sleep(0);
  }
}

/**
 * The keys ended long enough ago to go. No key joins them while they are deleted: a key
 * ended now is 90 days from qualifying, and the newest key never does.
 */
async function longEndedKeyIds(db: Queryable, now: number): Promise<number[]> {
  const rows = await db.all<{ id: number }>(
    `SELECT id FROM api_keys WHERE ${KEY_ENDED_AT} < ? AND ${NOT_NEWEST_KEY}`,
    [now - KEEP_ENDED_KEYS_DAYS * DAY_MS],
  );
  return rows.map((row) => row.id);
}

/** Purges one store's sent mail past its retention, expired idempotency records and long-ended keys. */
export async function purgeStore(
  db: Queryable,
  policy: HousekeepingPolicy,
  now: number,
): Promise<StorePurged> {
  const sentBefore = now - policy.keepSentMailDays * DAY_MS;
  const endedKeyIds = await longEndedKeyIds(db, now);
  return {
    sentMail: await deleteAll(
      db,
      "outbox",
      "status = 'sent' AND sent_at < ?",
      [sentBefore],
      policy.batch,
    ),
    idempotency: await deleteAll(
      db,
      "idempotency",
      "created_at <= ?",
      [now - IDEMPOTENCY_TTL_MS],
      policy.batch,
    ),
    endedKeys: await deleteAll(
      db,
      "api_keys",
      "id IN (SELECT value FROM json_each(?))",
      [JSON.stringify(endedKeyIds)],
      policy.batch,
    ),
    endedKeyIds,
  };
}

/** When the store next has rows to purge under `policy`; null when it has none to wait for. */
export async function nextPurgeAt(
  db: Queryable,
  policy: HousekeepingPolicy,
): Promise<number | null> {
  const oldest = await db.get<{ record: number | null; sent: number | null; key: number | null }>(
    `SELECT (SELECT min(created_at) FROM idempotency) AS record,
            (SELECT min(sent_at) FROM outbox WHERE status = 'sent') AS sent,
            (SELECT min(${KEY_ENDED_AT}) FROM api_keys WHERE ${NOT_NEWEST_KEY}) AS key`,
  );
  const due = [
    oldest?.record == null ? null : oldest.record + IDEMPOTENCY_TTL_MS,
    oldest?.sent == null ? null : oldest.sent + policy.keepSentMailDays * DAY_MS,
    oldest?.key == null ? null : oldest.key + KEEP_ENDED_KEYS_DAYS * DAY_MS,
  ].filter((at): at is number => at !== null);
  return due.length ? Math.min(...due) : null;
}

/** What the sweep keeps in platform.db: which stores are due (`purge_due`), and keys' last uses. */
export type HousekeepingRecords = Pick<
  Platform,
  "storesDueForPurge" | "setPurgeDue" | "forgetKeyUses"
>;

/**
 * Sweeps on a timer, one store at a time, so the outbox and idempotency tables stay
 * bounded. A sweep visits only the stores that can have something to purge: those used
 * since the last sweep and those whose kept rows have expired since (recorded in
 * platform.db), so with 10,000 stores it opens none of the idle ones. Rows written after
 * the last sweep before a stop wait for their store's next use: they cannot grow meanwhile.
 */
export class Housekeeper {
  private timer: ReturnType<typeof setInterval> | undefined;
  private sweeping: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly deps: {
      pool: StorePool;
      registry: StoreRegistry;
      platform: HousekeepingRecords;
      logger: Logger;
      now: () => number;
    },
    private readonly policy: HousekeepingPolicy,
  ) {}

  start(): void {
    if (this.stopped) return;
    this.kick();
    this.timer = setInterval(() => this.kick(), this.policy.everyMinutes * 60_000);
    this.timer.unref?.();
  }

  private kick(): void {
    this.sweeping ??= this.sweep()
      .catch((error) => this.deps.logger.error("housekeeping: sweep failed", errorFields(error)))
      .finally(() => (this.sweeping = null));
  }

  private async sweep(): Promise<void> {
    const due = await this.deps.platform.storesDueForPurge(this.deps.now());
    const stores = new Set([...due, ...this.deps.pool.takeUsed()]);
    const total: Purged = { sentMail: 0, idempotency: 0, endedKeys: 0 };
    const nextDue = new Map<string, number | null>();
    for (const slug of stores) {
      if (this.stopped) break;
      if (!this.deps.registry.get(slug)) {
        nextDue.set(slug, null);
        continue;
      }
      try {
        const { purged, next } = await this.deps.pool.use(
          slug,
          async (db) => ({
            purged: await purgeStore(db, this.policy, this.deps.now()),
            next: await nextPurgeAt(db, this.policy),
          }),
          { background: true },
        );
        total.sentMail += purged.sentMail;
        total.idempotency += purged.idempotency;
        total.endedKeys += purged.endedKeys;
        await this.deps.platform.forgetKeyUses(slug, purged.endedKeyIds);
        nextDue.set(slug, next);
      } catch (error) {
        this.deps.logger.error("housekeeping: cannot purge a store", {
          store: slug,
          ...errorFields(error),
        });
      }
      await runtime().sleep(PAUSE_BETWEEN_STORES_MS);
    }
    await this.deps.platform.setPurgeDue(nextDue);
    if (total.sentMail + total.idempotency + total.endedKeys > 0)
      this.deps.logger.info("housekeeping: purged", { ...total });
  }

  /** Stops the timer and waits for a sweep under way to finish its current store. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.sweeping;
  }
}
