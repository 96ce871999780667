import type { Migration } from "./migrate";

/**
 * Kept answers of idempotent creates, in platform.db (key_id is a host key's id: store
 * creates) and in each store's database (a store key's id, or minus a host key's for the
 * management API's creates in that store). One text for both: the schemas stay identical.
 */
const IDEMPOTENCY_TABLE = `
      CREATE TABLE idempotency (
        key_id INTEGER NOT NULL,
        idem_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        status INTEGER NOT NULL,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (key_id, idem_key)
      );
      CREATE INDEX idempotency_created ON idempotency (created_at);`;

/** platform.db: the registry of stores, their domains, plans and settings. */
export const platformMigrations: Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE stores (
        slug TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        domain TEXT NOT NULL,
        plan TEXT NOT NULL,
        owner_email TEXT NOT NULL,
        manual_approval INTEGER NOT NULL DEFAULT 0,
        notify_status INTEGER NOT NULL DEFAULT 1,
        registration INTEGER NOT NULL DEFAULT 1,
        keys_version INTEGER NOT NULL DEFAULT 0,
        mail_version INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX stores_domain ON stores (lower(domain));
    `,
  },
  {
    // Host keys for the management API (/manage/v1), digests only, soft-deleted; the management API's idempotency records (key_id is a host key's id).
    version: 2,
    sql: `
      CREATE TABLE host_keys (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE,
        hint TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        deleted_at INTEGER
      );
${IDEMPOTENCY_TABLE}
    `,
  },
  {
    // Stores that may have queued mail, so a server's start looks at no other outbox. Set
    // before the outbox commit (a crash leaves only an extra marker); cleared at a clean
    // stop. Existing stores start marked: the first start after the upgrade looks at all.
    version: 3,
    sql: `
      CREATE TABLE mail_queued (slug TEXT PRIMARY KEY);
      INSERT INTO mail_queued (slug) SELECT slug FROM stores;
    `,
  },
  {
    // When each store next has rows for the housekeeping sweep to purge (src/housekeeping.ts),
    // so a sweep opens no other store. Existing stores start due: the first sweep after the
    // upgrade looks at all.
    version: 4,
    sql: `
      CREATE TABLE purge_due (slug TEXT PRIMARY KEY, due_at INTEGER NOT NULL);
      INSERT INTO purge_due (slug, due_at) SELECT slug, 0 FROM stores;
    `,
  },
  {
    // When each store key was last used (src/keys/usage.ts), so that recording a use never
    // writes to the store's own database. A store's rows go with its row in `stores`.
    version: 5,
    sql: `
      CREATE TABLE key_usage (
        slug TEXT NOT NULL,
        key_id INTEGER NOT NULL,
        used_at INTEGER NOT NULL,
        UNIQUE (slug, key_id)
      );
    `,
  },
  {
    // This registry's own name: on a libSQL server each store namespace it makes carries
    // it (below), so a registry made again after the old one was lost never takes a store
    // namespace of the old one for a leftover to replace (src/db/location.ts).
    version: 6,
    sql: `INSERT INTO meta (key, value) VALUES ('registry', lower(hex(randomblob(16))));`,
  },
  {
    // Servers before this one queued key notices (management API, admin screen) and
    // sign-in links without marking their store: the first start after the upgrade looks
    // at every outbox once, so none of that mail is left behind.
    version: 7,
    sql: `INSERT OR IGNORE INTO mail_queued (slug) SELECT slug FROM stores;`,
  },
  {
    // Where each host key's Idempotency-Key was first used (src/db/idempotency.ts
    // `HostKeyUse`): its answers are kept per store, so a use in another store went unseen.
    version: 8,
    sql: `
      CREATE TABLE IF NOT EXISTS host_idempotency (
        host_key_id INTEGER NOT NULL,
        idem_key TEXT NOT NULL,
        scope TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (host_key_id, idem_key)
      );
      CREATE INDEX IF NOT EXISTS host_idempotency_created ON host_idempotency (created_at);`,
  },
];

/**
 * stores/{slug}.db: one store's data. Times are epoch milliseconds (UTC); money is
 * integer minor units (agorot); booleans are 0/1; nested order parts are JSON text
 * whose money values are minor units too.
 */
export const storeMigrations: Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE,
        hint TEXT NOT NULL,
        permissions TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        deleted_at INTEGER,
        last_used_at INTEGER
      );
      CREATE TABLE order_statuses (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
      CREATE TABLE customers (
        id INTEGER PRIMARY KEY,
        email TEXT NOT NULL,
        email_lower TEXT NOT NULL UNIQUE,
        first_name TEXT NOT NULL DEFAULT '',
        last_name TEXT NOT NULL DEFAULT '',
        phone TEXT,
        newsletter INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL,
        notes TEXT,
        registered_at INTEGER,
        last_visit_at INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX customers_created ON customers (created_at, id);
      CREATE INDEX customers_status_created ON customers (status, created_at, id);
      CREATE TABLE orders (
        id INTEGER PRIMARY KEY,
        number INTEGER NOT NULL,
        status_id INTEGER NOT NULL,
        paid INTEGER NOT NULL DEFAULT 0,
        total INTEGER NOT NULL DEFAULT 0,
        vat INTEGER,
        pay_type TEXT NOT NULL DEFAULT 'other',
        payments INTEGER,
        paypal_fee INTEGER,
        tracking_number TEXT,
        admin_notes TEXT,
        customer_notes TEXT NOT NULL DEFAULT '',
        newsletter INTEGER NOT NULL DEFAULT 0,
        customer_id INTEGER,
        customer_name TEXT NOT NULL DEFAULT '',
        customer_email TEXT NOT NULL DEFAULT '',
        customer_phone TEXT NOT NULL DEFAULT '',
        customer_address TEXT NOT NULL DEFAULT '',
        delivery_name TEXT NOT NULL DEFAULT '',
        delivery_price INTEGER NOT NULL DEFAULT 0,
        coupon TEXT,
        fields TEXT NOT NULL DEFAULT '[]',
        invoice TEXT,
        items TEXT NOT NULL DEFAULT '[]',
        promotions TEXT NOT NULL DEFAULT '[]',
        created_at INTEGER NOT NULL,
        updated_at INTEGER
      );
      CREATE INDEX orders_created ON orders (created_at, id);
      CREATE INDEX orders_status_created ON orders (status_id, created_at, id);
      CREATE INDEX orders_paid_created ON orders (paid, created_at, id);
      CREATE INDEX orders_status_paid_created ON orders (status_id, paid, created_at, id);
      CREATE TABLE products (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        sku TEXT,
        internal_sku TEXT UNIQUE,
        price INTEGER NOT NULL,
        sale_price INTEGER,
        stock INTEGER,
        visible INTEGER NOT NULL DEFAULT 1,
        description TEXT,
        vat_free INTEGER NOT NULL DEFAULT 0,
        unit_name TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX products_updated ON products (updated_at, id);
      CREATE INDEX products_sku ON products (sku);
      CREATE TABLE leads (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT,
        phone TEXT,
        message TEXT,
        source TEXT,
        handled INTEGER NOT NULL DEFAULT 0,
        notes TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX leads_created ON leads (created_at, id);
${IDEMPOTENCY_TABLE}
      CREATE TABLE outbox (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        recipient TEXT NOT NULL,
        subject TEXT NOT NULL,
        text TEXT NOT NULL,
        html TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'queued',
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        next_attempt_at INTEGER NOT NULL,
        claimed_at INTEGER,
        created_at INTEGER NOT NULL,
        sent_at INTEGER
      );
      CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
    `,
  },
  {
    // A rolled key points at its replacement: during the grace the two count as one active key.
    version: 2,
    sql: `ALTER TABLE api_keys ADD COLUMN replaced_by INTEGER;`,
  },
  {
    // The store admin's screen (src/admin/): one-time sign-in links and sessions, each
    // kept only as the SHA-256 digest of its secret.
    version: 3,
    sql: `
      CREATE TABLE admin_links (
        digest TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      );
      CREATE TABLE admin_sessions (
        digest TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
    `,
  },
  {
    // Which server holds a claimed message: several nodes may share a libSQL server, and
    // one restarting releases only its own orphaned claims (src/mail/outbox.ts).
    version: 4,
    sql: `ALTER TABLE outbox ADD COLUMN claimed_by TEXT;`,
  },
  {
    // The registry that made the store's namespace on a libSQL server ('registry'; see
    // platform version 6). Store files carry none: a data directory's lost registry is
    // found by its missing platform.db.
    version: 5,
    sql: `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  },
];
