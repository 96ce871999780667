/**
 * Bench fixtures, written straight into a data directory the server can serve: the schema
 * comes from src/db/migrations.ts through openDb (so the files are what the server expects),
 * the bulk rows go through the `libsql` binding in big transactions with prepared
 * statements (the JSON fixture loader would take far too long for 1,000,000 orders).
 *
 * The directory is reused while its manifest's hash (schema + this generator + sizes)
 * still matches; otherwise it is rebuilt beside and swapped in.
 */

import { Database as SqliteDatabase } from "bun:sqlite";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { platformMigrations, storeMigrations } from "../../src/db/migrations";
import { openDb } from "../../src/db/open";
import { Platform } from "../../src/db/platform";
import { storeDbPath } from "../../src/db/pool";
import { insertKey } from "../../src/keys/repository";

export interface BenchSizes {
  orders: number;
  products: number;
  customers: number;
  smallStores: number;
}

export const FULL_SIZES: BenchSizes = {
  orders: 1_000_000,
  products: 100_000,
  customers: 100_000,
  smallStores: 10_000,
};

export const BIG = { slug: "big", domain: "big.bench.test" };
/** A pinned secret for the big store (all areas write); only its SHA-256 is stored. */
export const BIG_KEY = "svc_sk_benchBigStoreAllWrite000000000000000001";
export const STATUSES = [
  { id: 1, name: "New" },
  { id: 2, name: "Awaiting payment" },
  { id: 3, name: "Shipped" },
  { id: 7, name: "Delivered" },
];
/** Orders are one minute apart from here, oldest first (id order = time order). */
const EPOCH = Date.UTC(2023, 0, 1);
const MINUTE = 60_000;
const ALL_WRITE = {
  products: "write",
  orders: "write",
  customers: "write",
  leads: "write",
} as const;
const BATCH = 20_000;

export const smallSlug = (n: number) => `s${String(n).padStart(5, "0")}`;
export const smallDomain = (n: number) => `${smallSlug(n)}.bench.test`;
/** Each small store has its own key: `svc_sk_benchSmall` + 30 digits. */
export const smallKey = (n: number) => `svc_sk_benchSmall${String(n).padStart(30, "0")}`;
export const orderCreatedAt = (id: number) => EPOCH + id * MINUTE;

export interface BenchData {
  dir: string;
  sizes: BenchSizes;
  generatedIn: number | null;
}

function manifestHash(sizes: BenchSizes): string {
  const hash = createHash("sha256");
  hash.update(JSON.stringify({ platformMigrations, storeMigrations, sizes }));
  hash.update(readFileSync(new URL(import.meta.url)));
  return hash.digest("hex").slice(0, 16);
}

type Raw = InstanceType<typeof Database>;

function openRaw(path: string): Raw {
  const db = new Database(path);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = OFF");
  db.exec("PRAGMA cache_size = -200000");
  return db;
}

/** Inserts `count` rows made by `row(i)` (i from 1) in transactions of BATCH rows. */
function bulkInsert(
  db: Raw,
  sql: string,
  count: number,
  row: (i: number) => unknown[],
  label: string,
): void {
  const statement = db.prepare(sql);
  const started = performance.now();
  for (let from = 1; from <= count; from += BATCH) {
    const to = Math.min(count, from + BATCH - 1);
    db.exec("BEGIN");
    for (let i = from; i <= to; i++) statement.run(...row(i));
    db.exec("COMMIT");
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`  ${label}: ${count.toLocaleString("en")} rows in ${seconds.toFixed(1)} s`);
}

/** A deterministic pseudo-random sequence, so two generations make the same data. */
function mulberry32(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function createStoreFile(path: string, secret: string): Promise<void> {
  const db = await openDb(`file:${path}`, storeMigrations, "native");
  await db.transaction(async (tx) => {
    await insertKey(tx, { name: "bench", permissions: ALL_WRITE, expiresAt: null, secret }, EPOCH);
    for (const status of STATUSES)
      await tx.run("INSERT INTO order_statuses (id, name) VALUES (?, ?)", [status.id, status.name]);
  });
  await db.close();
}

const CUSTOMER_SQL = `INSERT INTO customers (id, email, email_lower, first_name, last_name, phone, newsletter, status,
  registered_at, last_visit_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?)`;
const customerRow = (i: number) => {
  const email = `customer${i}@bench.test`;
  const at = EPOCH + i * 5 * MINUTE;
  return [
    i,
    email,
    email,
    `First${i}`,
    `Last${i}`,
    `050-${String(i).padStart(7, "0")}`,
    i % 3 === 0 ? 1 : 0,
    at,
    at,
    at,
  ];
};

const PRODUCT_SQL = `INSERT INTO products (id, name, sku, internal_sku, price, sale_price, stock, visible, description,
  vat_free, unit_name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, 0, NULL, ?, ?)`;
const productRow = (i: number) => {
  const at = EPOCH + i * 3 * MINUTE;
  return [
    i,
    `Product ${i}`,
    `SKU-${i}`,
    `INT-${i}`,
    1000 + (i % 500) * 100,
    i % 7 === 0 ? 900 : null,
    i % 11 === 0 ? null : i % 200,
    `Description of product ${i}.`,
    at,
    at,
  ];
};

const ORDER_SQL = `INSERT INTO orders (id, number, status_id, paid, total, vat, pay_type, payments, customer_id,
  customer_name, customer_email, customer_phone, customer_address, delivery_name, delivery_price, fields, items,
  promotions, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]', ?, '[]', ?)`;

function orderRowMaker(sizes: BenchSizes) {
  const random = mulberry32(42);
  const statusIds = STATUSES.map((s) => s.id);
  return (i: number) => {
    const lines = 1 + Math.floor(random() * 3);
    const items = [];
    let total = 0;
    for (let n = 0; n < lines; n++) {
      const productId = 1 + Math.floor(random() * sizes.products);
      const quantity = 1 + Math.floor(random() * 3);
      const unitPrice = 1000 + (productId % 500) * 100;
      total += unitPrice * quantity;
      items.push({
        name: `Product ${productId}`,
        sku: `SKU-${productId}`,
        productId,
        quantity,
        price: unitPrice,
        optionsPrice: 0,
        unitPrice,
        total: unitPrice * quantity,
        unitName: null,
        vatFree: false,
        options: [],
      });
    }
    const customerId = 1 + Math.floor(random() * sizes.customers);
    return [
      i,
      100_000 + i,
      statusIds[i % statusIds.length],
      i % 2,
      total + 2500,
      Math.round((total * 17) / 117),
      "credit_card",
      1,
      customerId,
      `First${customerId} Last${customerId}`,
      `customer${customerId}@bench.test`,
      `050-${String(customerId).padStart(7, "0")}`,
      `${customerId} Herzl St, Tel Aviv`,
      "Courier",
      2500,
      JSON.stringify(items),
      orderCreatedAt(i),
    ];
  };
}

async function generateBigStore(dir: string, sizes: BenchSizes): Promise<void> {
  const path = storeDbPath(dir, BIG.slug);
  await createStoreFile(path, BIG_KEY);
  const db = openRaw(path);
  bulkInsert(db, CUSTOMER_SQL, sizes.customers, customerRow, "customers");
  bulkInsert(db, PRODUCT_SQL, sizes.products, productRow, "products");
  bulkInsert(db, ORDER_SQL, sizes.orders, orderRowMaker(sizes), "orders");
  db.exec("ANALYZE");
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

/** One template store file with a few rows, copied per store; each copy gets its own key. */
async function generateSmallStores(dir: string, count: number): Promise<void> {
  const started = performance.now();
  const template = join(dir, "template.db");
  await createStoreFile(template, smallKey(0));
  const db = openRaw(template);
  const small = { orders: 5, products: 5, customers: 5, smallStores: 0 };
  bulkInsert(db, CUSTOMER_SQL, small.customers, customerRow, "template customers");
  bulkInsert(db, PRODUCT_SQL, small.products, productRow, "template products");
  bulkInsert(db, ORDER_SQL, small.orders, orderRowMaker(small), "template orders");
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  const digest = (secret: string) => createHash("sha256").update(secret).digest("hex");
  for (let n = 1; n <= count; n++) {
    const path = storeDbPath(dir, smallSlug(n));
    copyFileSync(template, path);
    // bun:sqlite here: the `libsql` binding keeps a closed connection's files open until
    // its statements are collected, and 10,000 of them exhaust the descriptors.
    const store = new SqliteDatabase(path);
    store
      .query("UPDATE api_keys SET digest = ?, hint = ?")
      .run(digest(smallKey(n)), `svc_sk_…${smallKey(n).slice(-4)}`);
    store.close();
  }
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${template}${suffix}`, { force: true });
  console.log(
    `  ${count.toLocaleString("en")} small stores in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

async function registerStores(dir: string, sizes: BenchSizes): Promise<void> {
  const platform = await Platform.open(dir);
  const settings = { manualCustomerApproval: false, notifyStatusChange: true, registration: true };
  await platform.addStore(
    {
      slug: BIG.slug,
      name: "Big Bench Store",
      domain: BIG.domain,
      plan: "enterprise",
      ownerEmail: "owner@big.bench.test",
      settings,
    },
    EPOCH,
  );
  for (let n = 1; n <= sizes.smallStores; n++) {
    const slug = smallSlug(n);
    await platform.addStore(
      {
        slug,
        name: `Small ${n}`,
        domain: smallDomain(n),
        plan: "growth",
        ownerEmail: `owner@${slug}.bench.test`,
        settings,
      },
      EPOCH,
    );
  }
  await platform.secret();
  await platform.close();
}

/** The bench data directory for these sizes: reused when its hash matches, else generated. */
export async function ensureBenchData(
  root: string,
  sizes: BenchSizes,
  force = false,
): Promise<BenchData> {
  const name =
    sizes.orders === FULL_SIZES.orders && sizes.smallStores === FULL_SIZES.smallStores
      ? "data"
      : `data-${sizes.orders}-${sizes.smallStores}`;
  const dir = join(root, name);
  const hash = manifestHash(sizes);
  const manifestPath = join(dir, "manifest.json");
  if (!force && existsSync(manifestPath)) {
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { hash: string };
    if (manifest.hash === hash) return { dir, sizes, generatedIn: null };
    console.log(
      `bench data in ${dir} is for another schema or generator (hash ${manifest.hash} ≠ ${hash}); regenerating`,
    );
  }
  const started = performance.now();
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(join(partial, "stores"), { recursive: true });
  console.log(
    `generating bench data in ${dir} (${sizes.orders.toLocaleString("en")} orders, ${sizes.smallStores.toLocaleString("en")} small stores)`,
  );
  // The registry first: a platform.db opened beside store files it does not hold is
  // refused as a lost registry (src/db/data-dir.ts).
  await registerStores(partial, sizes);
  await generateBigStore(partial, sizes);
  await generateSmallStores(partial, sizes.smallStores);
  writeFileSync(
    join(partial, "manifest.json"),
    `${JSON.stringify({ hash, sizes, generatedAt: new Date().toISOString() }, null, 2)}\n`,
  );
  rmSync(dir, { recursive: true, force: true });
  renameSync(partial, dir);
  const seconds = (performance.now() - started) / 1000;
  console.log(`bench data ready in ${seconds.toFixed(1)} s`);
  return { dir, sizes, generatedIn: seconds };
}

/** Undoes what a previous run added (customers, idempotency records, mail), so runs stay comparable. */
export function resetMutations(data: BenchData): void {
  const db = new Database(storeDbPath(data.dir, BIG.slug));
  db.exec("PRAGMA busy_timeout = 5000");
  db.prepare("DELETE FROM customers WHERE id > ?").run(data.sizes.customers);
  db.exec("DELETE FROM idempotency");
  db.exec("DELETE FROM outbox");
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}
