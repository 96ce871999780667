import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, testStore } from "./helpers";

/**
 * The sync algorithm we recommend to clients (README), run against the real server:
 *
 * - A pass lists `GET /products?updated_since=<mark>` (no filter on the first pass) and
 *   follows `nextCursor` until `hasMore` is false.
 * - A row equal to the one the client already holds is a repeat and is skipped: `since`
 *   is inclusive and times leave the API to the second, so a pass sees again the rows of
 *   the previous pass's last second. Compare the whole record, not just (id, updatedAt):
 *   two changes within one second share an updatedAt.
 * - The next pass's mark is the highest `updatedAt` seen so far (compared as instants).
 *
 * The server stamps a change inside its write transaction, never below the newest stamp
 * in the store, so stamps follow commit order: a change committed after a pass's first
 * page has updatedAt ≥ that pass's mark and is seen by the next pass.
 */

const P = "/api/v1/products";

interface Product {
  id: number;
  updatedAt: string;
  stock: number | null;
  [field: string]: unknown;
}

class SyncClient {
  readonly mirror = new Map<number, Product>();
  private mark: string | undefined;
  private markMs = Number.NEGATIVE_INFINITY;

  constructor(
    private server: TestServer,
    private limit: number,
  ) {}

  /** One pass; `betweenPages` runs after each page (to interleave writes). Returns the versions applied. */
  async pass(betweenPages: (page: number) => Promise<void> = async () => {}): Promise<Product[]> {
    const applied: Product[] = [];
    const since = this.mark ? `&updated_since=${encodeURIComponent(this.mark)}` : "";
    let cursor: string | null = null;
    for (let page = 0; ; page++) {
      const path: string = `${P}?limit=${this.limit}${since}${cursor ? `&cursor=${cursor}` : ""}`;
      const answer = await this.server.request(path);
      expect(answer.status).toBe(200);
      for (const row of answer.json.data as Product[]) {
        const held = this.mirror.get(row.id);
        if (!held || JSON.stringify(held) !== JSON.stringify(row)) {
          this.mirror.set(row.id, row);
          applied.push(row);
        }
        const ms = Date.parse(row.updatedAt);
        if (ms > this.markMs) {
          this.markMs = ms;
          this.mark = row.updatedAt;
        }
      }
      await betweenPages(page);
      if (!answer.json.hasMore) return applied;
      cursor = answer.json.nextCursor;
    }
  }
}

const minute = (i: number) => new Date(Date.UTC(2026, 0, 1, 8, i)).toISOString();
const fixtureProducts = Array.from({ length: 60 }, (_, i) => ({
  id: i + 1,
  name: `P${i + 1}`,
  price: 10,
  stock: 0,
  createdAt: minute(i),
}));

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    stores: [testStore({ products: fixtureProducts })],
    flags: { "rate-limit": "100000" },
  });
});
afterAll(() => server.stop());

const batch = (items: unknown[]) =>
  server.request(`${P}/batch`, { method: "POST", body: { items } });
const serverState = async () => {
  const answer = await server.request(`${P}?limit=100`);
  expect(answer.json.hasMore).toBe(false);
  return new Map((answer.json.data as Product[]).map((p) => [p.id, p]));
};
const ids = (rows: Product[]) => rows.map((r) => r.id).sort((a, b) => a - b);

describe("sync with updated_since and a cursor", () => {
  test("every product changed by a batch during a pass is seen exactly once in the next pass", async () => {
    const client = new SyncClient(server, 7);
    // Products 60..54 are on page 0 (newest first), 1..5 on the last page.
    const changed = [60, 58, 55, 30, 29, 3, 1];
    let concurrent: Promise<unknown> = Promise.resolve();
    const first = await client.pass(async (page) => {
      if (page === 1) {
        const answer = await batch(changed.slice(0, 4).map((id) => ({ id, stock: 100 + id })));
        expect(answer.json.data.updated).toBe(4);
      }
      // Not awaited: commits while the pass goes on.
      if (page === 3) concurrent = batch(changed.slice(4).map((id) => ({ id, stock: 100 + id })));
    });
    await concurrent;
    // The first pass saw every unchanged product once; a changed one at most once, before its change
    // (30 always moved past the cursor before the pass reached it).
    const unchanged = fixtureProducts.map((p) => p.id).filter((id) => !changed.includes(id));
    expect(ids(first).filter((id) => !changed.includes(id))).toEqual(unchanged);
    expect(new Set(ids(first)).size).toBe(first.length);
    expect(ids(first)).not.toContain(30);
    for (const product of first) expect(product.stock).toBe(0);

    const second = await client.pass();
    expect(ids(second)).toEqual([...changed].sort((a, b) => a - b));
    for (const product of second) expect(product.stock).toBe(100 + product.id);
    // Nothing new: a further pass applies nothing (its repeats are skipped).
    expect(await client.pass()).toEqual([]);
    expect(client.mirror).toEqual(await serverState());
  });

  test("two changes to one product within a second are both seen (dedupe by record, not updatedAt)", async () => {
    const client = new SyncClient(server, 10);
    await client.pass();
    expect((await batch([{ id: 7, stock: 1 }])).json.data.updated).toBe(1);
    expect((await client.pass()).map((p) => [p.id, p.stock])).toEqual([[7, 1]]);
    expect((await batch([{ id: 7, stock: 2 }])).json.data.updated).toBe(1);
    // Very likely the same second as the change before: same updatedAt, new record.
    expect((await client.pass()).map((p) => [p.id, p.stock])).toEqual([[7, 2]]);
    expect(client.mirror).toEqual(await serverState());
  });

  test("a client syncing while batches keep landing converges and never applies a version twice", async () => {
    const client = new SyncClient(server, 5);
    let round = 0;
    let writing = true;
    const writer = (async () => {
      for (round = 1; round <= 40; round++) {
        const items = [(round % 60) + 1, ((round * 7) % 60) + 1, ((round * 13) % 60) + 1].map(
          (id) => ({ id, stock: 1000 + round }),
        );
        await batch([...new Map(items.map((i) => [i.id, i])).values()]);
      }
      writing = false;
    })();
    const seen = new Set<string>();
    const record = (rows: Product[]) => {
      for (const row of rows) {
        const version = JSON.stringify(row);
        expect(seen.has(version)).toBe(false);
        seen.add(version);
      }
    };
    while (writing) record(await client.pass());
    await writer;
    record(await client.pass());
    expect(await client.pass()).toEqual([]);
    expect(client.mirror).toEqual(await serverState());
  });
});

describe("a store holding future-dated products", () => {
  let future: TestServer;
  beforeAll(async () => {
    future = await startTestServer({
      stores: [
        testStore({
          products: [{ id: 1, name: "Dated", price: 1, updatedAt: "2031-06-01T12:00:00+03:00" }],
        }),
      ],
    });
  });
  afterAll(() => future.stop());

  test("a new product's updatedAt follows the newest stamp; its createdAt is the clock's", async () => {
    const before = Date.now();
    const made = await future.request(P, { method: "POST", body: { name: "New", price: 2 } });
    expect(made.status).toBe(201);
    expect(made.json.data.updatedAt).toBe("2031-06-01T12:00:00+03:00");
    const created = Date.parse(made.json.data.createdAt);
    // Whole seconds in answers: the clock's second, not 2031.
    expect(created).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(created).toBeLessThanOrEqual(Date.now());
  });
});
