import { withNewSignInToken } from "../admin/links";
import { type Db, StoreArriving } from "../db/driver";
import type { Platform, Store } from "../db/platform";
import type { StorePool } from "../db/pool";
import { errorFields, type Logger } from "../log";
import type { StoreRegistry } from "../registry";
import { runtime } from "../runtime/runtime";
import { waitAtMost } from "../wait";
import { DEFAULT_RETRY, type RetryPolicy, retryDelay } from "./backoff";
import { DueStores } from "./due-stores";
import { Outage } from "./outage";
import {
  claimMail,
  dueMail,
  markFailed,
  markRetry,
  markSent,
  nextDueAt,
  type OutboxRow,
  releaseOrphanedClaims,
} from "./outbox";
import { DirTransport } from "./transports/dir";
import { LogTransport } from "./transports/log";
import { loginMayGoInClear, SmtpTransport } from "./transports/smtp";
import {
  classifyFailure,
  describeFailure,
  type OutgoingMail,
  type Transport,
} from "./transports/transport";

/** How soon a store whose file a load is still moving in is looked at again. */
const ARRIVING_RETRY_MS = 1000;
/** How long such a store is waited for without a word: a load moves hundreds in seconds. */
const ARRIVING_QUIET_MS = 30_000;

export interface MailWorkerOptions {
  pool: StorePool;
  registry: StoreRegistry;
  /** Which stores may have queued mail (platform.db); without it the start looks at every store. */
  markers?: MailMarkers;
  logger: Logger;
  smtp: string | null;
  mailDir: string | null;
  mailFrom: string;
  /** Tests swap these: the clock, the jitter source, the retry schedule, the transport. */
  now?: () => number;
  random?: () => number;
  retry?: Partial<RetryPolicy>;
  transport?: Transport;
  /** How often due times are checked (an in-memory look; no database is read). */
  tickMs?: number;
  /** Rows taken from one store before the next store gets a turn. */
  batchSize?: number;
  /**
   * This server's name when several may share the databases (a libSQL server): its
   * claims carry it, and its start releases only its own. Absent on files, where the
   * data directory's lock makes a server alone and every older claim is an orphan.
   */
  node?: string;
}

export type MailMarkers = Pick<
  Platform,
  "markMailQueued" | "storesWithQueuedMail" | "clearMailQueued"
>;

/** SMTP when configured, else files in the mail directory, else the log. */
function chooseTransport(
  options: Pick<MailWorkerOptions, "smtp" | "mailDir" | "logger">,
): Transport {
  if (options.smtp) return new SmtpTransport(options.smtp);
  if (options.mailDir) return new DirTransport(options.mailDir);
  return new LogTransport(options.logger);
}

type StoreOutcome = "done" | "transport-down";

/**
 * How long a stop waits for the message in a relay's hands once the grace is over: the
 * SMTP transport's own limits (10 s to connect, 10 s for the greeting, 20 s of silence,
 * 60 s for a whole message) end a relay that stops answering, and a server stopped by systemd (`TimeoutStopSec=30`,
 * deploy/storeapi.service) must exit before it is killed, 5 s of grace included.
 */
const IN_HAND_WAIT_MS = 20_000;

/**
 * Delivers queued outbox rows in the background.
 *
 * It never scans every store on a timer: at start it looks once at the outbox of each
 * store marked in platform.db (mail queued before a crash, or by the CLI while no server
 * ran; marked before the mail's commit, unmarked at a clean stop), then only stores it is
 * told about (`notify`, after a commit or a CLI's mail_version bump) enter its schedule
 * (src/mail/due-stores.ts) with the time their next row is due.
 *
 * Each row is claimed (attempt counted, hidden for `claimMs`) in its own short write,
 * handed to the transport with no transaction open, then marked sent or rescheduled in
 * another short write. A crash between hand-over and marking leaves the row queued and
 * claimed; the next start releases such orphaned claims, so it is sent again at once:
 * at-least-once, and only that one message repeats.
 */
export class MailWorker {
  private readonly transport: Transport;
  private readonly policy: RetryPolicy;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly schedule = new DueStores();
  /** Stores whose platform.db marker is known set (see `markQueued`). */
  private readonly marked = new Set<string>();
  /** Stores whose outbox failed and was logged: not logged again until it works. */
  private readonly outOfReach = new Set<string>();
  /** Stores a load has registered but not yet moved in (`StoreArriving`): since when. */
  private readonly arrivingSince = new Map<string, number>();
  /**
   * Rows the transport took whose `sent` could not be written (a full disk): when they were
   * sent, by store and row. Their next turn writes it instead of sending them again. A
   * store's entries go with the store (`forget`), and with a store made anew under its slug.
   */
  private readonly sentUnrecorded = new Map<
    string,
    { createdAt: number; rows: Map<number, number> }
  >();
  private timer: ReturnType<typeof setInterval> | undefined;
  private draining: Promise<void> | null = null;
  private scanning: Promise<void> = Promise.resolve();
  private drainAgain = false;
  private readonly outage: Outage;
  private stopping = false;
  /** After the stop grace period: no new message is taken in hand. */
  private halted = false;

  constructor(private readonly options: MailWorkerOptions) {
    this.transport = options.transport ?? chooseTransport(options);
    this.policy = { ...DEFAULT_RETRY, ...options.retry };
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.outage = new Outage(this.policy, this.random);
  }

  get transportName(): Transport["name"] {
    return this.transport.name;
  }

  /** A store has (or may have) new mail queued: look at it on the next turn. */
  notify(slug: string): void {
    if (this.halted) return;
    this.schedule.notify(slug);
    this.kick();
  }

  /** Before mail is queued in a store (inside its transaction): mark it for the next start. */
  async markQueued(slug: string): Promise<void> {
    if (!this.options.markers || this.marked.has(slug)) return;
    await this.options.markers.markMailQueued(slug);
    this.marked.add(slug);
  }

  /** Starts delivery; resolves once the start-up scan of the outboxes is done (or failed). */
  start(): Promise<void> {
    if (this.options.smtp && this.options.mailDir) {
      this.options.logger.warn("both --smtp and --mail-dir are set; mail goes by SMTP only");
    }
    if (this.options.smtp && loginMayGoInClear(this.options.smtp))
      this.options.logger.warn(
        "--smtp logs in over a connection that stays plain if the relay offers no STARTTLS: add ?starttls=required or use smtps://",
      );
    // Never the SMTP URL: it may carry a password.
    this.options.logger.info("mail delivery", {
      transport: this.transport.name,
      ...(this.transport.name === "dir" ? { mailDir: this.options.mailDir } : {}),
    });
    this.timer = setInterval(() => this.kick(), this.options.tickMs ?? 500);
    this.timer.unref?.();
    this.scanning = this.scanAll().catch((error) => {
      this.marked.clear(); // the scan did not finish: keep every marker
      this.options.logger.error("mail: outbox scan failed", errorFields(error));
    });
    return this.scanning;
  }

  /**
   * Stops taking new work, then delivers what is due (finishing the message in hand) for
   * at most `graceMs`. A message still in a relay's hands then is waited for up to
   * `inHandMs` more, so its outcome is recorded: left queued, it would be sent again by
   * the next start although the relay may take it. Whatever is left stays queued.
   */
  async stop(graceMs = 5000, inHandMs = IN_HAND_WAIT_MS): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.timer);
    await waitAtMost(this.flush(), graceMs);
    this.halted = true;
    if (this.draining) await waitAtMost(this.draining, inHandMs);
    await this.scanning;
    await this.unmarkDelivered();
    await this.transport.close().catch(() => {});
  }

  /** At stop, requests finished: a marked store with nothing queued needs no look next start. */
  private async unmarkDelivered(): Promise<void> {
    const delivered = [...this.marked]
      .filter((slug) => !this.schedule.has(slug))
      .map((slug) => ({ slug, mailVersion: this.options.registry.get(slug)?.mailVersion ?? -1 }));
    await this.options.markers
      ?.clearMailQueued(delivered)
      .catch((error) =>
        this.options.logger.error("mail: cannot clear outbox markers", errorFields(error)),
      );
  }

  /** Runs the drain until nothing due is left (waits for one already running). */
  private async flush(): Promise<void> {
    this.kick();
    while (this.draining) await this.draining;
  }

  /** The stores whose outbox the start looks at: the marked ones, else every store. */
  private async storesToScan(): Promise<string[]> {
    const { markers, registry } = this.options;
    if (!markers) return registry.all().map((store) => store.slug);
    const slugs = await markers.storesWithQueuedMail();
    for (const slug of slugs) this.marked.add(slug);
    return slugs.filter((slug) => registry.get(slug));
  }

  /** One look at each store's outbox that may hold mail, using the `outbox_due` index. */
  private async scanAll(): Promise<void> {
    const slugs = await this.storesToScan();
    for (const [index, slug] of slugs.entries()) {
      if (this.stopping) {
        // Not looked at: their markers must stay for the next start.
        for (const unscanned of slugs.slice(index)) this.marked.delete(unscanned);
        return;
      }
      // A macrotask yield per store: the reads finish synchronously, and without it a scan of
      // 10,000 stores held the event loop (no request, timer or collection) for ~15 s at start.
      await runtime().sleep(0);
      const store = this.options.registry.get(slug);
      if (!store) continue;
      try {
        const startedAt = this.now();
        const due = await this.options.pool.use(slug, async (db) => {
          await releaseOrphanedClaims(db, startedAt, this.options.node ?? null);
          return nextDueAt(db);
        });
        if (due === null) continue;
        this.schedule.dueBy(slug, due);
        this.kick();
      } catch (error) {
        this.outboxFailed(store, "mail: cannot read a store's outbox", error);
      }
    }
    // storesOpened: store databases the pool opened since start (the scan's, and requests').
    this.options.logger.info("mail: start-up scan done", {
      storesScanned: slugs.length,
      storesOpened: this.options.pool.misses,
    });
  }

  private kick(): void {
    if (this.halted) return;
    if (this.draining) {
      this.drainAgain = true;
      return;
    }
    this.draining = this.drain()
      .catch((error) => this.options.logger.error("mail: delivery loop failed", errorFields(error)))
      .finally(() => {
        this.draining = null;
        if (this.drainAgain) {
          this.drainAgain = false;
          this.kick();
        }
      });
  }

  /** Round-robin over the stores that have something due, a batch each, until none has. */
  private async drain(): Promise<void> {
    for (;;) {
      const now = this.now();
      if (this.halted || this.outage.paused(now)) return;
      const due = this.schedule.due(now);
      if (due.length === 0) return;
      for (const slug of due) {
        if (this.halted) return;
        if ((await this.deliverStore(slug)) === "transport-down") return;
      }
    }
  }

  private async deliverStore(slug: string): Promise<StoreOutcome> {
    const store = this.options.registry.get(slug);
    if (!store) {
      this.forget(slug);
      return "done";
    }
    this.schedule.deliveryStarts(slug);
    let outcome: StoreOutcome = "done";
    try {
      outcome = await this.options.pool.use(slug, async (db) => {
        const rows = await dueMail(db, this.now(), this.options.batchSize ?? 20);
        for (const row of rows) {
          if (this.halted) break;
          if ((await this.deliverRow(db, store, row)) === "transport-down") return "transport-down";
        }
        return "done";
      });
      if (this.halted) return outcome; // past the stop grace: the databases are closing
      const next = await this.options.pool.use(slug, nextDueAt);
      this.schedule.deliveryEnded(slug, next);
      this.arrivingSince.delete(slug);
      if (this.outOfReach.delete(slug))
        this.options.logger.info("mail: a store's outbox works again", { store: slug });
    } catch (error) {
      this.outboxFailed(store, "mail: cannot process a store's outbox", error);
    }
    return outcome;
  }

  /**
   * A store's outbox could not be read or written: try it again later, not in a loop, and
   * say so once until it works (a store retired until a restart fails every try). A store
   * deleted meanwhile (its database archived, its mail left there unsent) is dropped
   * without a word: its file is missing on purpose. One made anew under its slug since is
   * looked at now: the failure was the deleted one's. One a load is still moving in is
   * looked at again in a moment.
   */
  private outboxFailed(store: Store, message: string, error: unknown): void {
    const { slug } = store;
    const current = this.options.registry.get(slug);
    if (!current) {
      this.forget(slug);
      return;
    }
    if (current.createdAt !== store.createdAt) {
      this.schedule.dueBy(slug, this.now());
      this.kick();
      return;
    }
    if (error instanceof StoreArriving) {
      const since = this.arrivingSince.get(slug) ?? this.now();
      this.arrivingSince.set(slug, since);
      if (this.now() - since < ARRIVING_QUIET_MS) {
        this.schedule.retryAt(slug, this.now() + ARRIVING_RETRY_MS);
        return;
      }
      // Past that, the load that moves it in has stopped or hangs: said once, as below.
    }
    if (!this.outOfReach.has(slug)) {
      this.outOfReach.add(slug);
      this.options.logger.error(message, { store: slug, ...errorFields(error) });
    }
    this.schedule.retryAt(slug, this.now() + this.policy.baseDelayMs);
  }

  /** The store's rows sent but not recorded, if any (a store made anew under the slug numbers its rows afresh). */
  private unrecordedOf(store: Store): Map<number, number> | undefined {
    const entry = this.sentUnrecorded.get(store.slug);
    return entry?.createdAt === store.createdAt ? entry.rows : undefined;
  }

  /** A store deleted: its mail stays unsent in the archived file. */
  private forget(slug: string): void {
    this.sentUnrecorded.delete(slug);
    this.schedule.forget(slug);
    this.outOfReach.delete(slug);
    this.arrivingSince.delete(slug);
  }

  private async deliverRow(db: Db, store: Store, row: OutboxRow): Promise<StoreOutcome> {
    const unrecorded = this.unrecordedOf(store);
    const sentBefore = unrecorded?.get(row.id);
    if (unrecorded && sentBefore !== undefined) {
      await markSent(db, row.id, sentBefore);
      unrecorded.delete(row.id);
      if (unrecorded.size === 0) this.sentUnrecorded.delete(store.slug);
      this.options.logger.info("mail sent earlier, now recorded", {
        store: store.slug,
        outboxId: row.id,
        kind: row.kind,
      });
      return "done";
    }
    const claimedAt = this.now();
    const claimUntil = claimedAt + this.policy.claimMs;
    if (!(await claimMail(db, row.id, claimedAt, claimUntil, this.options.node ?? null)))
      return "done";
    const attempts = row.attempts + 1;
    const sending =
      row.kind === "admin_sign_in" ? await withNewSignInToken(db, row, claimedAt) : row;
    try {
      await this.transport.send(outgoing(store, sending, this.options.mailFrom));
    } catch (error) {
      return this.recordFailure(db, store, row, attempts, error);
    }
    // Sent: only a crash before this is recorded may repeat it (the memory above dies with it).
    this.outage.delivered();
    const sentAt = this.now();
    await markSent(db, row.id, sentAt).catch((error) => {
      const rows = this.unrecordedOf(store) ?? new Map<number, number>();
      this.sentUnrecorded.set(store.slug, {
        createdAt: store.createdAt,
        rows: rows.set(row.id, sentAt),
      });
      throw error;
    });
    this.options.logger.info("mail sent", {
      store: store.slug,
      outboxId: row.id,
      kind: row.kind,
      transport: this.transport.name,
      attempts,
    });
    return "done";
  }

  private async recordFailure(
    db: Db,
    store: Store,
    row: OutboxRow,
    attempts: number,
    error: unknown,
  ): Promise<StoreOutcome> {
    const kind = classifyFailure(error);
    const reason = describeFailure(error);
    const now = this.now();
    const giveUp =
      kind === "rejected"
        ? attempts >= this.policy.maxAttempts
        : now - row.created_at >= this.policy.maxAgeMs;
    const fields = { store: store.slug, outboxId: row.id, kind: row.kind, attempts, error: reason };
    if (giveUp) {
      await markFailed(db, row.id, reason);
      this.options.logger.error("mail failed for good", fields);
    } else {
      const retryAt = now + retryDelay(attempts, this.policy, this.random);
      await markRetry(db, row.id, reason, retryAt);
      this.options.logger.warn("mail delivery failed; will retry", {
        ...fields,
        retryAt: new Date(retryAt).toISOString(),
      });
    }
    if (kind !== "unavailable") return "done";
    this.outage.failed(now);
    return "transport-down";
  }
}

const CUSTOMER_KINDS = new Set(["customer_approved", "order_status"]);

/** The message for a row: from the store's name at `--mail-from`; customers may reply to the owner. */
function outgoing(store: Store, row: OutboxRow, mailFrom: string): OutgoingMail {
  const angled = /^(.*?)\s*<([^>]*)>\s*$/.exec(mailFrom);
  const address = angled?.[2] ?? mailFrom;
  const domain = address.slice(address.lastIndexOf("@") + 1) || "localhost";
  // A name of its own wins (`Shop <a@b>`); a bare `<a@b>` is an address like `a@b`.
  const ownName = angled?.[1].trim();
  return {
    store: store.slug,
    id: row.id,
    kind: row.kind,
    from: ownName ? mailFrom : { name: store.name, address },
    replyTo: CUSTOMER_KINDS.has(row.kind) ? store.ownerEmail : null,
    to: row.recipient,
    subject: row.subject,
    text: row.text,
    html: row.html,
    messageId: `<${store.slug}.${row.id}.${row.created_at}@${domain}>`,
    date: new Date(row.created_at),
  };
}
