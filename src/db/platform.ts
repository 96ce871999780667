import type { Plan } from "../plans";
import type { Db, Queryable, SqlValue } from "./driver";
import { FileLocation, type Location } from "./location";
import { settleCrashedLoad } from "./staging";

const BUMP_KEYS_AND_MAIL =
  "UPDATE stores SET keys_version = keys_version + 1, mail_version = mail_version + 1 WHERE slug = ?";

export interface StoreSettings {
  manualCustomerApproval: boolean;
  notifyStatusChange: boolean;
  registration: boolean;
}

export interface Store {
  slug: string;
  name: string;
  domain: string;
  plan: Plan;
  ownerEmail: string;
  settings: StoreSettings;
  /** Bumped whenever the store's keys change, so a running server reloads them. */
  keysVersion: number;
  /** Bumped when mail is queued outside the server (the CLI), so the worker looks. */
  mailVersion: number;
  createdAt: number;
}

interface StoreRow {
  slug: string;
  name: string;
  domain: string;
  plan: Plan;
  owner_email: string;
  manual_approval: number;
  notify_status: number;
  registration: number;
  keys_version: number;
  mail_version: number;
  created_at: number;
}

const toStore = (row: StoreRow): Store => ({
  slug: row.slug,
  name: row.name,
  domain: row.domain,
  plan: row.plan,
  ownerEmail: row.owner_email,
  settings: {
    manualCustomerApproval: row.manual_approval === 1,
    notifyStatusChange: row.notify_status === 1,
    registration: row.registration === 1,
  },
  keysVersion: row.keys_version,
  mailVersion: row.mail_version,
  createdAt: row.created_at,
});

export type NewStore = Omit<Store, "keysVersion" | "mailVersion" | "createdAt">;

/** What a change of a store names; the rest stays as it is in the row. */
export type StoreChange = Partial<Pick<Store, "name" | "domain" | "plan" | "ownerEmail">> & {
  settings?: Partial<StoreSettings>;
};

/**
 * One life of a store under its slug: a store deleted and made again under the same slug
 * is another, and must not inherit the first one's rate-limit windows, key uses or cursors.
 */
export const storeIncarnation = (store: Pick<Store, "slug" | "createdAt">) =>
  `${store.slug}@${store.createdAt}`;

/** slug, name, domain, plan, owner_email, manual_approval, notify_status, registration. */
const storeColumns = (store: NewStore): SqlValue[] => [
  store.slug,
  store.name,
  store.domain,
  store.plan,
  store.ownerEmail,
  Number(store.settings.manualCustomerApproval),
  Number(store.settings.notifyStatusChange),
  Number(store.settings.registration),
];

/** Removes a store's row and its key uses (call inside a transaction). */
export async function unregisterStore(q: Queryable, slug: string): Promise<void> {
  await q.run("DELETE FROM stores WHERE slug = ?", [slug]);
  await q.run("DELETE FROM key_usage WHERE slug = ?", [slug]);
}

/**
 * Inserts a store's row, or replaces the row of its slug (`replace`; never another store's
 * that holds the domain: that fails). Its key and mail versions start at `now`, so a
 * running server sees a replaced store as changed and reloads its keys and outbox.
 */
export async function writeStore(
  q: Queryable,
  store: NewStore,
  now: number,
  replace = false,
): Promise<void> {
  if (replace) await unregisterStore(q, store.slug);
  await q.run(
    `INSERT INTO stores (slug, name, domain, plan, owner_email, manual_approval, notify_status, registration,
       keys_version, mail_version, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [...storeColumns(store), now, now, now],
  );
}

/** One key's use, as `KeyUsage` records it. */
export interface KeyUse {
  slug: string;
  keyId: number;
  usedAt: number;
}

/** The platform registry (`DIR/platform.db`, or namespace `platform`): stores, domains, plans, settings. */
export class Platform {
  private remoteVersion = 0;

  private constructor(
    readonly db: Db,
    readonly location: Location,
  ) {}

  /**
   * Opens the registry (`where`: a data directory, or any `Location`, e.g. a libSQL
   * server); in files, a load that crashed half way is finished or undone first.
   */
  static async open(where: string | Location): Promise<Platform> {
    const location = typeof where === "string" ? new FileLocation(where) : where;
    const db = await location.openPlatform();
    if (location instanceof FileLocation) await settleCrashedLoad(location.dataDir, db);
    return new Platform(db, location);
  }

  async listStores(): Promise<Store[]> {
    const rows = await this.db.all<StoreRow>("SELECT * FROM stores ORDER BY slug");
    return rows.map(toStore);
  }

  async getStore(slug: string): Promise<Store | undefined> {
    const row = await this.db.get<StoreRow>("SELECT * FROM stores WHERE slug = ?", [slug]);
    return row && toStore(row);
  }

  async domainTaken(domain: string, exceptSlug = ""): Promise<boolean> {
    const row = await this.db.get(
      "SELECT slug FROM stores WHERE lower(domain) = lower(?) AND slug <> ?",
      [domain, exceptSlug],
    );
    return row !== undefined;
  }

  async addStore(store: NewStore, now = Date.now()): Promise<void> {
    await writeStore(this.db, store, now);
  }

  /**
   * Changes only what `change` names, in one statement: a change another process made a
   * moment ago (a server's registry copy can be 250 ms old) is never written back over.
   * Undefined when the store is gone.
   */
  async changeStore(slug: string, change: StoreChange): Promise<Store | undefined> {
    const { settings = {} } = change;
    const flag = (value: boolean | undefined) => (value === undefined ? null : Number(value));
    const result = await this.db.run(
      `UPDATE stores SET name = coalesce(?, name), domain = coalesce(?, domain),
       plan = coalesce(?, plan), owner_email = coalesce(?, owner_email),
       manual_approval = coalesce(?, manual_approval), notify_status = coalesce(?, notify_status),
       registration = coalesce(?, registration)
       WHERE slug = ?`,
      [
        change.name ?? null,
        change.domain ?? null,
        change.plan ?? null,
        change.ownerEmail ?? null,
        flag(settings.manualCustomerApproval),
        flag(settings.notifyStatusChange),
        flag(settings.registration),
        slug,
      ],
    );
    return result.changes === 0 ? undefined : this.getStore(slug);
  }

  async removeStore(slug: string): Promise<void> {
    await this.db.transaction((tx) => unregisterStore(tx, slug));
  }

  /**
   * Records key uses (the latest per key wins), in one statement. A use older than its
   * store's row belongs to a store since deleted and is dropped.
   */
  async recordKeyUse(uses: KeyUse[]): Promise<void> {
    await this.db.run(
      `INSERT INTO key_usage (slug, key_id, used_at)
       SELECT s.slug, u.key_id, u.used_at
       FROM (SELECT value ->> 0 AS slug, value ->> 1 AS key_id, value ->> 2 AS used_at FROM json_each(?)) AS u
       JOIN stores AS s ON s.slug = u.slug AND s.created_at <= u.used_at
       WHERE true
       ON CONFLICT (slug, key_id) DO UPDATE SET used_at = max(used_at, excluded.used_at)`,
      [JSON.stringify(uses.map((use) => [use.slug, use.keyId, use.usedAt]))],
    );
  }

  /** When each of a store's keys was last used, by key id. */
  async keyUsage(slug: string): Promise<Map<number, number>> {
    const rows = await this.db.all<{ key_id: number; used_at: number }>(
      "SELECT key_id, used_at FROM key_usage WHERE slug = ?",
      [slug],
    );
    return new Map(rows.map((row) => [row.key_id, row.used_at]));
  }

  /** Forgets the uses of keys whose rows housekeeping deleted from the store. */
  async forgetKeyUses(slug: string, keyIds: number[]): Promise<void> {
    if (keyIds.length === 0) return;
    await this.db.run(
      "DELETE FROM key_usage WHERE slug = ? AND key_id IN (SELECT value FROM json_each(?))",
      [slug, JSON.stringify(keyIds)],
    );
  }

  /** After a key change: a running server reloads the store's keys and delivers the owner's notice. */
  async bumpKeysAndMail(slug: string): Promise<void> {
    await this.db.run(BUMP_KEYS_AND_MAIL, [slug]);
  }

  /** Before queuing mail in a store's outbox: its outbox is looked at on the next start. */
  async markMailQueued(slug: string): Promise<void> {
    await this.db.run("INSERT OR IGNORE INTO mail_queued (slug) VALUES (?)", [slug]);
  }

  async storesWithQueuedMail(): Promise<string[]> {
    const rows = await this.db.all<{ slug: string }>("SELECT slug FROM mail_queued ORDER BY slug");
    return rows.map((row) => row.slug);
  }

  /**
   * After a clean stop, for stores whose outbox holds nothing queued as far as the server
   * knows: `mailVersion` is the store's version it last saw. A marker is kept when the
   * version has moved since: a command queued mail (and marked the store) that the server
   * never looked at.
   */
  async clearMailQueued(stores: Array<{ slug: string; mailVersion: number }>): Promise<void> {
    if (stores.length === 0) return;
    await this.db.transaction(async (tx) => {
      for (const { slug, mailVersion } of stores)
        await tx.run(
          `DELETE FROM mail_queued WHERE slug = ?1
             AND NOT EXISTS (SELECT 1 FROM stores WHERE slug = ?1 AND mail_version <> ?2)`,
          [slug, mailVersion],
        );
    });
  }

  /**
   * Before a command changes a store's keys: marks the store for mail and bumps its key and
   * mail versions, together, so a server stopping meanwhile either sees the bump and keeps
   * the marker, or clears it before the marker is written (`clearMailQueued`).
   */
  async markForKeyChange(slug: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.run("INSERT OR IGNORE INTO mail_queued (slug) VALUES (?)", [slug]);
      await tx.run(BUMP_KEYS_AND_MAIL, [slug]);
    });
  }

  /** Stores whose housekeeping is due by `now` (see `purge_due`). */
  async storesDueForPurge(now: number): Promise<string[]> {
    const rows = await this.db.all<{ slug: string }>(
      "SELECT slug FROM purge_due WHERE due_at <= ? ORDER BY slug",
      [now],
    );
    return rows.map((row) => row.slug);
  }

  /** Records when each store is next due for housekeeping; null: nothing left to purge. */
  async setPurgeDue(dueAt: Map<string, number | null>): Promise<void> {
    if (dueAt.size === 0) return;
    await this.db.transaction(async (tx) => {
      for (const [slug, at] of dueAt) {
        if (at === null) await tx.run("DELETE FROM purge_due WHERE slug = ?", [slug]);
        else
          await tx.run("INSERT OR REPLACE INTO purge_due (slug, due_at) VALUES (?, ?)", [slug, at]);
      }
    });
  }

  /**
   * Changes whenever any connection (another process included) commits to platform.db.
   * A libSQL server gives each request its own connection, so there `data_version` never
   * moves: every call is "changed" and the registry re-reads each poll (one small query).
   */
  async dataVersion(): Promise<number> {
    if (this.location.remote) return ++this.remoteVersion;
    const row = await this.db.get<{ data_version: number }>("PRAGMA data_version");
    return row?.data_version ?? 0;
  }

  /** A per-data-directory secret (cursor signatures), made on first use. */
  async secret(): Promise<string> {
    const existing = await this.db.get<{ value: string }>(
      "SELECT value FROM meta WHERE key = 'secret'",
    );
    if (existing) return existing.value;
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const value = Buffer.from(bytes).toString("base64url");
    await this.db.run("INSERT OR IGNORE INTO meta (key, value) VALUES ('secret', ?)", [value]);
    return (
      (await this.db.get<{ value: string }>("SELECT value FROM meta WHERE key = 'secret'"))
        ?.value ?? value
    );
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
