import type { Queryable } from "./db/driver";
import { IDEMPOTENCY_TTL_MS } from "./db/idempotency";
import type { StorePool } from "./db/pool";
import type { Logger } from "./log";
import { errorFields } from "./log";
import type { StoreRegistry } from "./registry";

const DAY_MS = 24 * 60 * 60 * 1000;
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
}

/** Deletes up to `batch` rows of `table` matching `where`; returns how many it deleted. */
async function deleteBatch(
  db: Queryable,
  table: string,
  where: string,
  args: number[],
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
  args: number[],
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch(db, table, where, args, batch);
    total += deleted;
    if (deleted < batch) return total;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

/** Purges one store's sent mail past its retention and its expired idempotency records. */
export async function purgeStore(
  db: Queryable,
  policy: HousekeepingPolicy,
  now: number,
): Promise<Purged> {
  const sentBefore = now - policy.keepSentMailDays * DAY_MS;
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
  };
}

/** Sweeps every store on a timer, one store at a time, so the outbox and idempotency tables stay bounded. */
export class Housekeeper {
  private timer: ReturnType<typeof setInterval> | undefined;
  private sweeping: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly deps: {
      pool: StorePool;
      registry: StoreRegistry;
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
    this.sweeping ??= this.sweep().finally(() => (this.sweeping = null));
  }

  private async sweep(): Promise<void> {
    const total: Purged = { sentMail: 0, idempotency: 0 };
    for (const store of this.deps.registry.all()) {
      if (this.stopped) return;
      try {
        const purged = await this.deps.pool.use(store.slug, (db) =>
          purgeStore(db, this.policy, this.deps.now()),
        );
        total.sentMail += purged.sentMail;
        total.idempotency += purged.idempotency;
      } catch (error) {
        this.deps.logger.error("housekeeping: cannot purge a store", {
          store: store.slug,
          ...errorFields(error),
        });
      }
      await new Promise((resolve) => setTimeout(resolve, PAUSE_BETWEEN_STORES_MS));
    }
    if (total.sentMail + total.idempotency > 0)
      this.deps.logger.info("housekeeping: purged", { ...total });
  }

  /** Stops the timer and waits for a sweep under way to finish its current store. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.sweeping;
  }
}
