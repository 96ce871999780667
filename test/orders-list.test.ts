import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import Database from "libsql";
import type { Db } from "../src/db/driver";
import type { AppContext } from "../src/http/context";
import { listPage } from "../src/http/pagination";
import { orderListSource } from "../src/routes/orders/list";
import { documentedRequests } from "./contract";
import {
  KEYS,
  otherStore,
  type RequestOptions,
  startTestServer,
  type TestServer,
  testStore,
} from "./helpers";
import { TEST_LIBSQL, testLocation } from "./sqld";

/** GET /orders: order, limit, cursors, filters, stability, and the query plans behind them. */

const HOUR = 3_600_000;
const BASE = Date.parse("2026-01-10T00:00:00+02:00");
const STATUS_CYCLE = [1, 2, 3, 7];

/** Orders 1..40 an hour apart; 41..60 all at the same instant (the id breaks the tie). */
const createdAt = (id: number) => BASE + Math.min(id, 41) * HOUR;
const statusOf = (id: number) => STATUS_CYCLE[id % 4];
const paidOf = (id: number) => id % 3 === 0;
const IDS = Array.from({ length: 60 }, (_, i) => i + 1);
const orders = IDS.map((id) => ({
  id,
  number: 5000 + id,
  status: statusOf(id),
  paid: paidOf(id),
  total: id,
  customer: { name: `Buyer ${id}`, email: `b${id}@example.test` },
  createdAt: new Date(createdAt(id)).toISOString(),
}));

/** The ids a list must answer, in its order. */
const newestFirst = (ids: number[]) =>
  [...ids].sort((a, b) => createdAt(b) - createdAt(a) || b - a);

/**
 * Store "large": orders 1..7 by their count of items (~250 bytes each as stored): one of
 * ~2.3 MB, three small, two of ~1.2 MB, and one of ~100 KB (a list leaves out the items of
 * an order over 64 KiB and reads them for it alone).
 */
const LARGE_ITEMS = [9_000, 1, 2, 3, 4_800, 4_800, 400];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    stores: [
      testStore({ orders }),
      otherStore({ orders }),
      testStore({
        slug: "busy",
        domain: "busy.test",
        ownerEmail: "o@busy.test",
        orders: orders.slice(0, 30),
      }),
      testStore({
        slug: "large",
        domain: "large.test",
        ownerEmail: "o@large.test",
        orders: LARGE_ITEMS.map((items, i) => ({
          id: i + 1,
          number: 7001 + i,
          status: 1,
          total: 1,
          items: Array.from({ length: items }, (_, n) => ({
            name: `${n}`.padEnd(100, "x"),
            productId: 1,
            quantity: 1,
            price: 1,
          })),
          createdAt: new Date(BASE + i * HOUR).toISOString(),
        })),
      }),
    ],
  });
});
afterAll(() => server.stop());

/** Every answer is also checked against the OpenAPI document. */
const request = (path: string, options?: RequestOptions) =>
  documentedRequests(server)(path, options);

const list = (query: string, host = "shop1.test") =>
  request(`/api/v1/orders${query}`, { host, key: host === "shop2.test" ? KEYS.other : KEYS.read });

/** Follows nextCursor to the end; returns the ids in the order seen. */
async function walk(query: string, host = "shop1.test", between?: () => void): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const sep = query ? "&" : "?";
    const answer = await list(
      cursor ? `${query}${sep}cursor=${encodeURIComponent(cursor)}` : query,
      host,
    );
    expect(answer.status).toBe(200);
    ids.push(...answer.json.data.map((o: { id: number }) => o.id));
    expect(answer.json.nextCursor === null).toBe(!answer.json.hasMore);
    if (!answer.json.hasMore) return ids;
    cursor = answer.json.nextCursor;
    between?.();
  }
  throw new Error("the walk did not end");
}

describe("GET /orders order and pages", () => {
  test("newest first by createdAt then id; 50 by default; the envelope carries hasMore and nextCursor", async () => {
    const answer = await list("");
    expect(answer.status).toBe(200);
    expect(answer.json.ok).toBe(true);
    expect(answer.json.data.map((o: { id: number }) => o.id)).toEqual(
      newestFirst(IDS).slice(0, 50),
    );
    expect(answer.json.hasMore).toBe(true);
    expect(typeof answer.json.nextCursor).toBe("string");
    expect(Object.keys(answer.json)).toEqual(["ok", "data", "hasMore", "nextCursor"]);
    const first = answer.json.data[0];
    expect(first).toMatchObject({
      id: 60,
      number: 5060,
      status: { id: 1, name: "New" },
      paid: true,
      total: 60,
    });
    expect(first.createdAt).toBe("2026-01-11T17:00:00+02:00");
  });

  test("a walk with limit visits every order once, in order, and ends with nextCursor null", async () => {
    expect(await walk("?limit=7")).toEqual(newestFirst(IDS));
    expect(await walk("?limit=100")).toEqual(newestFirst(IDS));
    const last = await list("?limit=60");
    expect(last.json.hasMore).toBe(false);
    expect(last.json.nextCursor).toBe(null);
  });

  test("limit outside 1..100 or not a number is 400 invalid_parameter", async () => {
    for (const limit of ["0", "101", "abc", "", "-1", "1.5", "05", "1e1"]) {
      const answer = await list(`?limit=${limit}`);
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({ code: "invalid_parameter", field: "limit" });
    }
    expect((await list("?limit=1")).json.data.length).toBe(1);
  });

  test("unknown or repeated parameters are 400 invalid_parameter", async () => {
    for (const [query, field] of [
      ["?page=2", "page"],
      ["?created_after=2026-01-01", "created_after"],
      ["?updated_since=2026-01-01", "updated_since"],
      ["?limit=5&limit=6", "limit"],
    ]) {
      const answer = await list(query);
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({ code: "invalid_parameter", field });
    }
  });

  test("a parameter named like an object member is unknown, not repeated", async () => {
    for (const name of ["constructor", "__proto__", "toString"]) {
      const answer = await list(`?${name}=1`);
      expect(answer.status).toBe(400);
      expect(answer.json.error).toEqual({
        code: "invalid_parameter",
        message: `Parameter "${name}" is not allowed here.`,
        field: name,
      });
    }
  });
});

describe("GET /orders with large orders", () => {
  test("a page ends once its orders pass 2 MiB (hasMore says more follow), and each order is whole", async () => {
    const pages: string[] = [];
    let cursor = "";
    for (let page = 0; page < 5; page++) {
      const answer = await list(`?limit=100${cursor}`, "large.test");
      expect(answer.status).toBe(200);
      const data = answer.json.data as Array<{ id: number; items: Array<{ name: string }> }>;
      const shown = data.map(
        (o) => `${o.id}:${o.items.length}:${o.items.at(-1)?.name.slice(0, 4)}`,
      );
      pages.push(`${shown.join(" ")} ${answer.json.hasMore}`);
      if (!answer.json.hasMore) break;
      cursor = `&cursor=${encodeURIComponent(answer.json.nextCursor)}`;
    }
    // 7 and 6 take ~1.3 MB; 5 would make it ~2.5 MB, so it opens the next page. Order 1,
    // over 2 MiB on its own, is a page alone.
    expect(pages).toEqual([
      "7:400:399x 6:4800:4799 true",
      "5:4800:4799 4:3:2xxx 3:2:1xxx 2:1:0xxx true",
      "1:9000:8999 false",
    ]);
  });
});

describe("GET /orders filters", () => {
  test("status, paid and both together", async () => {
    expect(await walk("?status=3&limit=4")).toEqual(
      newestFirst(IDS.filter((id) => statusOf(id) === 3)),
    );
    expect(await walk("?paid=true&limit=6")).toEqual(newestFirst(IDS.filter(paidOf)));
    expect(await walk("?paid=false")).toEqual(newestFirst(IDS.filter((id) => !paidOf(id))));
    expect(await walk("?status=7&paid=true&limit=2")).toEqual(
      newestFirst(IDS.filter((id) => statusOf(id) === 7 && paidOf(id))),
    );
  });

  test("a status the store does not have matches nothing", async () => {
    const answer = await list("?status=4");
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ ok: true, data: [], hasMore: false, nextCursor: null });
  });

  test("bad filter values are 400 invalid_parameter", async () => {
    for (const [query, field] of [
      ["?status=0", "status"],
      ["?status=abc", "status"],
      ["?status=1.5", "status"],
      ["?paid=yes", "paid"],
      ["?paid=1", "paid"],
      ["?created_since=2026-13-01", "created_since"],
      ["?created_since=yesterday", "created_since"],
      ["?created_since=2026-01-10T10:00:00", "created_since"],
    ]) {
      const answer = await list(query);
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({ code: "invalid_parameter", field });
    }
  });

  test("created_since is inclusive, with an offset, Z, or a bare date (00:00 Israel time)", async () => {
    const since = (id: number) =>
      newestFirst(IDS.filter((other) => createdAt(other) >= createdAt(id)));
    expect(
      await walk(`?created_since=${encodeURIComponent("2026-01-10T10:00:00+02:00")}&limit=9`),
    ).toEqual(since(10));
    expect(await walk("?created_since=2026-01-10T08:00:00Z")).toEqual(since(10));
    expect(await walk("?created_since=2026-01-11&limit=5")).toEqual(since(24));
    expect(await walk(`?created_since=${encodeURIComponent("2026-01-11T17:00:00+02:00")}`)).toEqual(
      since(41),
    );
    expect(await walk(`?created_since=${encodeURIComponent("2026-01-11T17:00:01+02:00")}`)).toEqual(
      [],
    );
    expect(await walk(`?created_since=2026-01-11&status=3&paid=true&limit=1`)).toEqual(
      since(24).filter((id) => statusOf(id) === 3 && paidOf(id)),
    );
  });
});

describe("GET /orders cursors", () => {
  async function cursorOf(query: string, host = "shop1.test"): Promise<string> {
    const answer = await list(query, host);
    expect(answer.json.hasMore).toBe(true);
    return encodeURIComponent(answer.json.nextCursor);
  }

  const expectBadCursor = async (query: string, host = "shop1.test") => {
    const answer = await list(query, host);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({ code: "invalid_parameter", field: "cursor" });
  };

  test("forged or edited cursors are 400", async () => {
    const cursor = decodeURIComponent(await cursorOf("?limit=2"));
    const [payload, signature] = cursor.split(".");
    const forged = Buffer.from(JSON.stringify([Date.now(), 1])).toString("base64url");
    for (const bad of [
      "abc",
      "",
      `${forged}.${signature}`,
      `${payload}.${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`,
      `${payload}x.${signature}`,
      `${cursor}.x`,
    ]) {
      await expectBadCursor(`?cursor=${encodeURIComponent(bad)}`);
    }
  });

  test("a cursor is bound to its filters; limit may change", async () => {
    const cursor = await cursorOf("?status=1&limit=2");
    expect((await list(`?status=1&limit=3&cursor=${cursor}`)).status).toBe(200);
    await expectBadCursor(`?cursor=${cursor}`);
    await expectBadCursor(`?status=3&cursor=${cursor}`);
    await expectBadCursor(`?status=1&paid=true&cursor=${cursor}`);
    await expectBadCursor(`?status=1&created_since=2026-01-01&cursor=${cursor}`);
  });

  test("a cursor is bound to its store and its list", async () => {
    const cursor = await cursorOf("?limit=2");
    await expectBadCursor(`?limit=2&cursor=${cursor}`, "shop2.test");
    for (const other of ["customers", "leads", "products"]) {
      const answer = await request(`/api/v1/${other}?limit=2&cursor=${cursor}`, { key: KEYS.read });
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe("invalid_parameter");
    }
  });

  // Writes the store file directly beside the server.
  test.skipIf(TEST_LIBSQL)(
    "orders inserted between page calls cause no skip and no repeat",
    async () => {
      const db = new Database(join(server.dataDir, "stores", "busy.db"));
      db.exec("PRAGMA busy_timeout = 5000");
      let number = 9000;
      const insert = db.prepare(
        "INSERT INTO orders (number, status_id, paid, created_at) VALUES (?, ?, ?, ?)",
      );
      try {
        const before = await walk("?limit=4", "busy.test", () => {
          insert.run(number++, 1, 0, Date.now()); // newer than all
          insert.run(number++, 1, 0, createdAt(30)); // same instant as the newest original, higher id
          insert.run(number++, 3, 1, Date.now());
        });
        expect(before).toEqual(newestFirst(IDS.slice(0, 30)));
        const present = await walk("?paid=true&limit=100", "busy.test");
        expect(present.length).toBe(10 + 7); // the originals and the paid orders inserted above
        const filtered = await walk("?paid=true&limit=3", "busy.test", () => {
          insert.run(number++, 1, 1, Date.now());
        });
        expect(filtered).toEqual(present);
      } finally {
        db.close();
      }
      const all = await list("?limit=100", "busy.test");
      expect(all.json.data.length).toBe(30 + (number - 9000));
    },
  );
});

describe("GET /orders query plans", () => {
  /** Runs the list's real queries against a copy-free store file, recording SQL and args. */
  async function plansFor(query: Record<string, unknown>): Promise<string[]> {
    const db: Db = await (await testLocation(server.dataDir)).openStore("shop1");
    const seen: Array<[string, unknown[]]> = [];
    const recorder = {
      all: (sql: string, args: unknown[]) => {
        seen.push([sql, args]);
        return db.all(sql, args as never);
      },
    };
    const vars: Record<string, unknown> = {
      db: recorder,
      store: { slug: "shop1" },
      deps: { cursorSecret: "plan-test" },
    };
    const c = { var: vars, get: (name: string) => vars[name] } as unknown as AppContext;
    try {
      const parsed = {
        limit: 2,
        cursor: undefined,
        created_since: undefined,
        status: undefined,
        paid: undefined,
        ...query,
      };
      const first = await listPage(c, orderListSource, parsed);
      expect(first.nextCursor).not.toBe(null);
      await listPage(c, orderListSource, { ...parsed, cursor: first.nextCursor ?? undefined });
      const plans: string[] = [];
      for (const [sql, args] of seen) {
        const rows = await db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, args as never);
        plans.push(rows.map((r) => r.detail).join(" | "));
      }
      return plans;
    } finally {
      await db.close();
    }
  }

  const cases: Array<[Record<string, unknown>, string]> = [
    [{}, "orders_created"],
    [{ created_since: BASE }, "orders_created"],
    [{ status: 1 }, "orders_status_created"],
    [{ status: 1, created_since: BASE }, "orders_status_created"],
    [{ paid: false }, "orders_paid_created"],
    [{ paid: false, created_since: BASE }, "orders_paid_created"],
    [{ status: 1, paid: false }, "orders_status_paid_created"],
    [{ status: 1, paid: false, created_since: BASE }, "orders_status_paid_created"],
  ];

  for (const [query, index] of cases) {
    test(`${JSON.stringify(query)} pages through ${index}, no sort step`, async () => {
      const plans = await plansFor(query);
      expect(plans.length).toBe(2);
      for (const plan of plans) {
        expect(plan).toMatch(
          new RegExp(`^SEARCH orders USING INDEX ${index} |^SCAN orders USING INDEX ${index}`),
        );
        expect(plan).not.toContain("TEMP B-TREE");
        expect(plan).not.toMatch(/SCAN orders(?! USING)/);
      }
    });
  }
});
