import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../db/driver";
import { storeMigrations } from "../db/migrations";
import { openDb } from "../db/open";
import { type KeyUse, Platform, type Store } from "../db/platform";
import type { StorePool } from "../db/pool";
import { KeyCache } from "./cache";
import { type Access, AREAS, allows, NO_PERMISSIONS, normalizePermissions } from "./permissions";
import { createKey, deleteKey, insertKey, KeyLimitError, listKeys } from "./repository";
import { digestSecret, generateSecret, hintFor, KEY_PATTERN } from "./secret";
import { KeyUsage } from "./usage";

const DAY = 86_400_000;

describe("secrets", () => {
  test("svc_sk_ + 40 alphanumerics, all different, digest is SHA-256 hex, hint shows the last 4", () => {
    const secrets = new Set(Array.from({ length: 200 }, generateSecret));
    expect(secrets.size).toBe(200);
    for (const secret of secrets) expect(secret).toMatch(/^svc_sk_[A-Za-z0-9]{40}$/);
    const secret = "svc_sk_abcdefghijklmnopqrstuvwxyz0123456789";
    expect(digestSecret(secret)).toBe(new Bun.CryptoHasher("sha256").update(secret).digest("hex"));
    expect(hintFor(secret)).toBe("svc_sk_…6789");
  });

  test("generated characters cover the whole alphabet (no modulo bias shortcut)", () => {
    const seen = new Set([
      ...Array.from({ length: 100 }, generateSecret).join("").replaceAll("svc_sk_", ""),
    ]);
    expect(seen.size).toBe(62);
  });

  test("presented keys must have the format: short, wrong prefix or other characters are refused", () => {
    expect(KEY_PATTERN.test(`svc_sk_${"a".repeat(32)}`)).toBe(true);
    expect(KEY_PATTERN.test(`svc_sk_${"a".repeat(31)}`)).toBe(false);
    expect(KEY_PATTERN.test(`svc_pk_${"a".repeat(40)}`)).toBe(false);
    expect(KEY_PATTERN.test(`svc_sk_${"a".repeat(39)}-`)).toBe(false);
  });
});

describe("permissions", () => {
  const levels: Access[] = ["none", "read", "write"];
  test("write implies read; none grants nothing; an unknown level or area grants nothing", () => {
    for (const level of levels) {
      const perms = { ...NO_PERMISSIONS, orders: level };
      expect([allows(perms, "orders", "read"), allows(perms, "orders", "write")]).toEqual(
        level === "none" ? [false, false] : level === "read" ? [true, false] : [true, true],
      );
      for (const area of AREAS.filter((a) => a !== "orders"))
        expect(allows(perms, area, "read")).toBe(false);
    }
    const odd = normalizePermissions({
      orders: "admin",
      products: "WRITE",
      leads: "write",
      extra: "write",
    });
    expect(odd).toEqual({ products: "none", orders: "none", customers: "none", leads: "write" });
    // biome-ignore lint: an area the table does not know
    expect(allows(odd, "reports" as any, "read")).toBe(false);
  });
});

const store = (over: Partial<Store> = {}): Store => ({
  slug: "shop1",
  name: "Shop",
  domain: "shop1.test",
  plan: "growth",
  ownerEmail: "owner@shop1.test",
  settings: { manualCustomerApproval: false, notifyStatusChange: true, registration: true },
  keysVersion: 0,
  mailVersion: 0,
  createdAt: 0,
  ...over,
});

describe("key store on a real database", () => {
  let dir: string;
  let db: Db;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "storeapi-keys-"));
    db = await openDb(`file:${join(dir, "s.db")}`, storeMigrations);
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("only a digest and a hint are stored; at most 5 active keys, expired and deleted ones not counted", async () => {
    const now = 1_700_000_000_000;
    const perms = { ...NO_PERMISSIONS, orders: "read" as const };
    const created = await createKey(
      db,
      store(),
      { name: "k1", permissions: perms, expiresAt: null },
      "tester",
      now,
    );
    const raw = JSON.stringify(await db.all("SELECT * FROM api_keys"));
    expect(raw).not.toContain(created.secret);
    expect(raw).toContain(digestSecret(created.secret));
    await db.transaction(async (tx) => {
      await insertKey(tx, { name: "expired", permissions: perms, expiresAt: now - DAY }, now);
      await insertKey(
        tx,
        { name: "deleted", permissions: perms, expiresAt: null, deleted: true },
        now,
      );
      for (const name of ["k2", "k3", "k4"])
        await insertKey(tx, { name, permissions: perms, expiresAt: now + 30 * DAY }, now);
    });
    const fifth = await createKey(
      db,
      store(),
      { name: "k5", permissions: perms, expiresAt: null },
      "tester",
      now,
    );
    await expect(
      createKey(db, store(), { name: "k6", permissions: perms, expiresAt: null }, "tester", now),
    ).rejects.toBeInstanceOf(KeyLimitError);
    // an active key that expires frees its place
    const later = now + 31 * DAY;
    const sixth = await createKey(
      db,
      store(),
      { name: "k6", permissions: perms, expiresAt: null },
      "tester",
      later,
    );
    await deleteKey(db, store(), fifth.id, "tester", later);
    const names = (await listKeys(db)).map((k) => [k.name, k.deletedAt !== null]);
    expect(names).toEqual([
      ["k1", false],
      ["expired", false],
      ["deleted", true],
      ["k2", false],
      ["k3", false],
      ["k4", false],
      ["k5", true],
      ["k6", false],
    ]);
    expect(sixth.hint).toBe(hintFor(sixth.secret));
    const mail = await db.all<{ kind: string; recipient: string }>(
      "SELECT kind, recipient FROM outbox ORDER BY id",
    );
    expect(mail).toEqual([
      { kind: "key_created", recipient: "owner@shop1.test" },
      { kind: "key_created", recipient: "owner@shop1.test" },
      { kind: "key_created", recipient: "owner@shop1.test" },
      { kind: "key_deleted", recipient: "owner@shop1.test" },
    ]);
  });
});

/** A pool stand-in that counts database uses and answers from a list. */
function fakePool(rows: () => unknown[]) {
  const calls: string[] = [];
  const db = {
    all: async (sql: string) => {
      calls.push(sql);
      return rows();
    },
    run: async (sql: string, args: unknown[]) => {
      calls.push(`${sql} ${JSON.stringify(args)}`);
      return { changes: 1, lastInsertRowid: 0 };
    },
  };
  const pool = {
    use: async <T>(_slug: string, fn: (d: unknown) => Promise<T>) => fn(db),
  } as unknown as StorePool;
  return { pool, calls };
}

const keyRow = (id: number, secret: string) => ({
  id,
  name: `k${id}`,
  digest: digestSecret(secret),
  hint: hintFor(secret),
  permissions: JSON.stringify({ orders: "read" }),
  created_at: 0,
  expires_at: null,
  deleted_at: null,
  last_used_at: null,
});

describe("KeyCache", () => {
  test("keys are found by digest from memory; the database is read again only when keysVersion moves", async () => {
    const a = generateSecret();
    const b = generateSecret();
    let rows = [keyRow(1, a)];
    const { pool, calls } = fakePool(() => rows);
    const cache = new KeyCache(pool);
    const v0 = store();
    expect((await cache.find(v0, a))?.id).toBe(1);
    expect(await cache.find(v0, b)).toBeUndefined();
    await Promise.all(Array.from({ length: 10 }, () => cache.find(v0, a)));
    expect(calls.length).toBe(1);
    rows = [keyRow(2, b)];
    const v1 = store({ keysVersion: 1 });
    expect(await cache.find(v1, a)).toBeUndefined();
    expect((await cache.find(v1, b))?.id).toBe(2);
    expect(calls.length).toBe(2);
    // a request still holding the old store view reads afresh but does not replace the newer entry
    expect(await cache.find(v0, a)).toBeUndefined();
    expect((await cache.find(v1, b))?.id).toBe(2);
    expect(calls.length).toBe(3);
  });
});

describe("KeyCache.forget", () => {
  test("the store's keys are read again at the same version, and a load begun before is not kept", async () => {
    const a = generateSecret();
    let rows = [keyRow(1, a)];
    const { pool, calls } = fakePool(() => rows);
    const cache = new KeyCache(pool);
    const v0 = store();
    expect((await cache.find(v0, a))?.id).toBe(1);
    rows = []; // key 1 deleted, and the key version not moved (platform.db refused the bump)
    cache.forget("shop1");
    expect(await cache.find(v0, a)).toBeUndefined();
    expect(calls.length).toBe(2);
    // A load under way when the keys are forgotten answers its request but is not kept.
    rows = [keyRow(1, a)];
    const stale = cache.find(store({ keysVersion: 1 }), a);
    cache.forget("shop1");
    rows = [];
    expect((await stale)?.id).toBe(1);
    expect(await cache.find(store({ keysVersion: 1 }), a)).toBeUndefined();
    expect(calls.length).toBe(4);
  });
});

describe("KeyUsage", () => {
  const minute = 60_000 * 1000;

  test("a use is recorded at most once a minute per key, in platform.db, all keys in one write", async () => {
    const dir = mkdtempSync(join(tmpdir(), "storeapi-usage-"));
    const platform = await Platform.open(dir);
    try {
      for (const slug of ["shop1", "shop2"])
        await platform.addStore({ ...store({ slug, domain: `${slug}.test` }) }, minute - 1);
      const keys = [keyRow(1, generateSecret()), keyRow(2, generateSecret())].map((row) => ({
        ...row,
        last_used_at: row.id === 2 ? minute + 5 : null,
      }));
      const { pool } = fakePool(() => keys);
      const usage = new KeyUsage(platform);
      const first = (slug: string) => ({ slug, createdAt: minute - 1 });
      const lastUsed = async (store: { slug: string; createdAt: number }) =>
        (await pool.use(store.slug, (db) => usage.listKeys(db as Db, store))).map(
          (k) => k.lastUsedAt,
        );
      for (let i = 0; i < 50; i++) usage.touch(first("shop1"), 1, minute + i);
      usage.touch(first("shop1"), 2, minute);
      usage.touch(first("shop2"), 1, minute + 1);
      // not yet written, but this process knows; the store's own older column loses to a later use
      expect(await lastUsed(first("shop1"))).toEqual([minute, minute + 5]);
      expect(await platform.keyUsage("shop1")).toEqual(new Map());
      await usage.flush();
      expect(await platform.keyUsage("shop1")).toEqual(
        new Map([
          [1, minute],
          [2, minute],
        ]),
      );
      expect(await platform.keyUsage("shop2")).toEqual(new Map([[1, minute + 1]]));
      usage.touch(first("shop1"), 1, minute + 59_000); // same minute: not recorded again
      usage.touch(first("shop1"), 2, minute + 60_000);
      await usage.flush();
      expect(await lastUsed(first("shop1"))).toEqual([minute, minute + 60_000]);
      // A store deleted and made again under the same slug starts with no uses: a use of the
      // first one still in memory is neither shown nor written, and the new store's key 1
      // is recorded in the minute the old key 1 already was.
      usage.touch(first("shop2"), 1, minute + 120_000);
      await platform.removeStore("shop2");
      const again = { slug: "shop2", createdAt: minute + 120_001 };
      await platform.addStore(store({ slug: "shop2", domain: "shop2.test" }), again.createdAt);
      expect(await lastUsed(again)).toEqual([null, minute + 5]);
      await usage.flush();
      expect(await platform.keyUsage("shop2")).toEqual(new Map());
      usage.touch(again, 1, minute + 120_002);
      expect(await lastUsed(again)).toEqual([minute + 120_002, minute + 5]);
      await usage.flush();
      expect(await platform.keyUsage("shop2")).toEqual(new Map([[1, minute + 120_002]]));
    } finally {
      await platform.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("uses a failed write could not record are written with the next one", async () => {
    const written: KeyUse[][] = [];
    let fail = true;
    const platform = {
      recordKeyUse: async (uses: KeyUse[]) => {
        if (fail) throw new Error("database is locked");
        written.push(uses);
      },
    } as unknown as Platform;
    const reported: string[] = [];
    const usage = new KeyUsage(platform, (message) => void reported.push(message));
    const shop1 = { slug: "shop1", createdAt: 1 };
    usage.touch(shop1, 1, minute);
    usage.touch(shop1, 2, minute);
    await usage.flush();
    usage.touch(shop1, 2, minute + 60_000); // newer than the one that failed: it wins
    fail = false;
    await usage.flush();
    expect(written).toEqual([
      [
        { slug: "shop1", keyId: 1, usedAt: minute },
        { slug: "shop1", keyId: 2, usedAt: minute + 60_000 },
      ],
    ]);
    expect(reported).toEqual([
      "could not record the use of 2 keys (logged again only after a write works)",
    ]);
  });
});
