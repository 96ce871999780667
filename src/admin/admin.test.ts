import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../db/driver";
import { storeMigrations } from "../db/migrations";
import { openDb } from "../db/open";
import { formatIsraelForPeople } from "../format/time";
import { KeyInputError, prepareKey } from "../keys/repository";
import { FlashStore } from "./flash";
import { isSameOrigin } from "./http";
import { WindowLimit } from "./limits";
import { consumeSignInLink, createSignInLink, LINK_LIFETIME_MS, signInUrl } from "./links";
import {
  endSession,
  findSession,
  formTokenOf,
  SESSION_LIFETIME_MS,
  signInWithToken,
} from "./sessions";

const OWNER = "owner@shop.test";
const T0 = Date.UTC(2026, 0, 1);

describe("sign-in links and sessions", () => {
  let dir: string;
  let db: Db;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "storeapi-admin-"));
    db = await openDb(`file:${join(dir, "s.db")}`, storeMigrations);
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a link: 43 URL-safe characters, 15 minutes, once", async () => {
    const link = await createSignInLink(db, "http://shop1.localhost:8080/", T0);
    expect(link.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(link.url).toBe(`http://shop1.localhost:8080/api/admin/sign-in?token=${link.token}`);
    expect(link.expiresAt).toBe(T0 + 15 * 60_000);
    expect(await consumeSignInLink(db, link.token, T0 + LINK_LIFETIME_MS)).toBe(false); // expired at exactly 15 min
    expect(await consumeSignInLink(db, link.token, T0 + LINK_LIFETIME_MS - 1)).toBe(true);
    expect(await consumeSignInLink(db, link.token, T0 + 1)).toBe(false); // spent
    expect(await consumeSignInLink(db, "unknown", T0)).toBe(false);
  });

  test("two sign-ins racing with one token: exactly one session", async () => {
    const { token } = await createSignInLink(db, "https://shop.test", T0);
    const sessions = await Promise.all([
      signInWithToken(db, OWNER, token, T0),
      signInWithToken(db, OWNER, token, T0),
    ]);
    expect(sessions.filter(Boolean).length).toBe(1);
  });

  test("a session lasts 12 hours, is stored as a digest, and ends on sign-out", async () => {
    const { token } = await createSignInLink(db, "https://shop.test", T0);
    const session = await signInWithToken(db, OWNER, token, T0);
    if (!session) throw new Error("no session");
    expect(session.expiresAt).toBe(T0 + 12 * 3_600_000);
    expect(session.formToken).toBe(formTokenOf(session.id));
    expect(JSON.stringify(await db.all("SELECT * FROM admin_sessions"))).not.toContain(session.id);
    expect(
      (await findSession(db, OWNER, session.id, T0 + SESSION_LIFETIME_MS - 1))?.formToken,
    ).toBe(session.formToken);
    expect(await findSession(db, OWNER, session.id, T0 + SESSION_LIFETIME_MS)).toBeUndefined();
    expect(await findSession(db, OWNER, undefined, T0)).toBeUndefined();
    // A new owner ends the previous owner's sessions.
    expect(await findSession(db, "new-owner@shop.test", session.id, T0)).toBeUndefined();
    await endSession(db, OWNER, session.id);
    expect(await findSession(db, OWNER, session.id, T0)).toBeUndefined();
  });

  test("expired links and sessions are dropped as new ones are made", async () => {
    const old = await createSignInLink(db, "https://shop.test", T0);
    await signInWithToken(db, OWNER, old.token, T0);
    const later = T0 + SESSION_LIFETIME_MS;
    const fresh = await createSignInLink(db, "https://shop.test", later);
    await signInWithToken(db, OWNER, fresh.token, later);
    expect((await db.all("SELECT * FROM admin_links")).length).toBe(1);
    expect((await db.all("SELECT * FROM admin_sessions")).length).toBe(1);
  });

  test("signInUrl encodes the token and drops a trailing slash of the origin", () => {
    expect(signInUrl("https://a.test/", "x y")).toBe(
      "https://a.test/api/admin/sign-in?token=x%20y",
    );
  });
});

describe("same-origin rule", () => {
  const own = "http://shop1.test";
  test.each([
    [{ secFetchSite: "same-origin" }, true],
    [{ secFetchSite: "same-origin", origin: "null" }, true],
    [{ secFetchSite: "same-site", origin: own }, false],
    [{ secFetchSite: "cross-site", origin: own }, false],
    [{ secFetchSite: "none" }, false],
    [{ origin: own }, true],
    [{ origin: "HTTP://SHOP1.TEST" }, true],
    [{ origin: "http://shop1.test:8080" }, false],
    [{ origin: "https://shop1.test" }, false],
    [{ origin: "null" }, false],
    [{}, false],
  ] as const)("%o → %p", (headers, expected) => {
    expect(isSameOrigin(headers, own)).toBe(expected);
  });
});

describe("WindowLimit", () => {
  /** A limit on a clock the test sets. */
  const limitAt = (limit: number, windowMs: number, maxKeys?: number) => {
    const clock = { now: 0 };
    return { clock, limit: new WindowLimit(limit, windowMs, () => clock.now, maxKeys) };
  };

  test("limit events per sliding window per key; refusals are not counted", () => {
    const { clock, limit } = limitAt(2, 1000);
    const takeAt = (key: string, now: number) => {
      clock.now = now;
      return limit.take(key);
    };
    expect([takeAt("a", 0), takeAt("a", 100), takeAt("a", 200), takeAt("b", 200)]).toEqual([
      true,
      true,
      false,
      true,
    ]);
    expect(limit.retryAfter("a")).toBe(1);
    expect(takeAt("a", 999)).toBe(false);
    expect(takeAt("a", 1000)).toBe(true); // the event at 0 left the window
    expect(takeAt("a", 1050)).toBe(false);
  });

  test("an event given back no longer counts; giving back what was not taken changes nothing", () => {
    const { limit } = limitAt(2, 1000);
    expect([limit.take("a"), limit.take("a")]).toEqual([true, true]);
    limit.giveBack("a");
    limit.giveBack("b");
    expect([limit.take("a"), limit.take("a")]).toEqual([true, false]);
  });

  test("a wall clock stepped back an hour does not stretch a window", () => {
    const wallClock = spyOn(Date, "now").mockReturnValue(1_800_000_000_000);
    try {
      const limit = new WindowLimit(1, 60_000);
      expect(limit.take("a")).toBe(true);
      wallClock.mockReturnValue(1_800_000_000_000 - 3_600_000);
      expect(limit.retryAfter("a")).toBeWithin(59, 61);
    } finally {
      wallClock.mockRestore();
    }
  });

  test("memory stays bounded however many keys arrive", () => {
    const { limit } = limitAt(5, 1000, 100);
    for (let i = 0; i < 10_000; i++) limit.take(`ip${i}`);
    expect(limit.size).toBeLessThanOrEqual(100);
  });
});

describe("FlashStore", () => {
  test("read once, only by its own session and kind, and not after 10 minutes", () => {
    const flashes = new FlashStore();
    flashes.put("s1", { kind: "created", secret: "svc_sk_x", name: "erp" }, 0);
    expect(flashes.take("s2", 0, "created")).toBeUndefined();
    expect(flashes.take("s1", 0, "deleted")).toBeUndefined();
    expect(flashes.take("s1", 1, "created")).toEqual({
      kind: "created",
      secret: "svc_sk_x",
      name: "erp",
    });
    expect(flashes.take("s1", 2, "created")).toBeUndefined();
    flashes.put("s1", { kind: "deleted", name: "erp", hint: "h" }, 0);
    expect(flashes.take("s1", 10 * 60_000, "deleted")).toBeUndefined();
  });

  test("new keys wait in turn, none lost to a later one or to a deletion's notice", () => {
    const flashes = new FlashStore();
    const created = (name: string) => ({
      kind: "created" as const,
      secret: `svc_sk_${name}`,
      name,
    });
    flashes.put("s1", created("a"), 0);
    flashes.put("s1", created("b"), 0);
    flashes.put("s1", { kind: "deleted", name: "x", hint: "h" }, 0);
    flashes.put("s1", { kind: "deleted", name: "y", hint: "h" }, 0);
    expect(flashes.waiting("s1", 0, "created")).toBe(2);
    expect(flashes.take("s1", 0, "deleted")).toEqual({ kind: "deleted", name: "y", hint: "h" });
    expect(flashes.take("s1", 0, "deleted")).toBeUndefined();
    expect(flashes.take("s1", 0, "created")).toEqual(created("a"));
    expect(flashes.waiting("s1", 0, "created")).toBe(1);
    expect(flashes.take("s1", 0, "created")).toEqual(created("b"));
    expect(flashes.take("s1", 0, "created")).toBeUndefined();
  });

  test("holds the flashes of at most maxSessions sessions", () => {
    const flashes = new FlashStore(3);
    for (let i = 0; i < 5; i++) flashes.put(`s${i}`, { kind: "deleted", name: "k", hint: "h" }, 0);
    expect(flashes.take("s0", 0, "deleted")).toBeUndefined();
    expect(flashes.take("s4", 0, "deleted")).toBeDefined();
  });
});

describe("shared pieces", () => {
  test("dates for people, in Israel time", () => {
    expect(formatIsraelForPeople(Date.UTC(2099, 5, 30, 22, 30))).toBe("1 July 2099, 01:30");
    expect(formatIsraelForPeople(Date.UTC(2026, 0, 5, 8, 3))).toBe("5 January 2026, 10:03");
  });

  test("prepareKey: the one set of key rules (CLI, screen)", () => {
    const now = T0;
    expect(
      prepareKey({ name: "erp", permissions: { orders: "write" }, expires: "30d" }, now),
    ).toEqual({
      name: "erp",
      permissions: { products: "none", orders: "write", customers: "none", leads: "none" },
      expiresAt: now + 30 * 86_400_000,
    });
    expect(prepareKey({ name: "all none", permissions: {} }, now).expiresAt).toBeNull();
    const problem = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        return error instanceof KeyInputError ? `${error.field} ${error.problem}` : String(error);
      }
    };
    expect(
      problem(() => prepareKey({ name: "x", permissions: {} }, now, { requireAccess: true })),
    ).toBe("permissions must give read or write access to at least one area");
    expect(problem(() => prepareKey({ name: "x".repeat(101), permissions: {} }, now))).toBe(
      "name must be at most 100 characters",
    );
    expect(problem(() => prepareKey({ name: "ab\u0000cd", permissions: {} }, now))).toBe(
      "name must be valid Unicode text without NUL characters",
    );
    expect(problem(() => prepareKey({ name: "\u0000", permissions: {} }, now))).toBe(
      "name must be valid Unicode text without NUL characters",
    );
    expect(problem(() => prepareKey({ name: "x", permissions: { leads: "admin" } }, now))).toBe(
      'leads takes none, read or write, not "admin"',
    );
    expect(
      problem(() => prepareKey({ name: "x", permissions: {}, expires: "toString" }, now)),
    ).toBe('expires takes never, 30d, 90d or 1y, not "toString"');
  });
});
