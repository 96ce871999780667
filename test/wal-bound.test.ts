/** Issue 13 item 4: the WAL stays bounded under sustained writes (a small limit makes it quick). */
import { afterAll, expect, test } from "bun:test";
import { existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { send, tempDir, testStore } from "./helpers";
import { runCli, spawnServer } from "./process";
import { TEST_LIBSQL } from "./sqld";

const dir = tempDir("storeapi-wal-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LIMIT = 1024 * 1024;
const CLIENTS = 8;
const WRITES_PER_CLIENT = 600;
const walSize = (path: string) => (existsSync(path) ? statSync(path).size : 0);

// Measures the WAL file on disk; sqld keeps its own.
test.skipIf(TEST_LIBSQL)(
  "under sustained PATCHes a store's WAL is emptied once it passes the limit",
  async () => {
    const data = join(dir, "data");
    const fixture = join(dir, "fixture.json");
    const products = Array.from({ length: 50 }, (_, i) => ({
      id: i + 1,
      name: `p${i + 1}`,
      price: 1,
    }));
    writeFileSync(fixture, JSON.stringify({ stores: [testStore({ products })] }));
    expect((await runCli(["load", fixture, "--data", data])).code).toBe(0);
    const server = await spawnServer(data, ["--rate-limit", "1000000"], {
      STOREAPI_TEST_WAL_LIMIT: String(LIMIT),
    });
    const wal = join(data, "stores", "shop1.db-wal");
    let largest = 0;
    const sampler = setInterval(() => (largest = Math.max(largest, walSize(wal))), 20);
    try {
      const description = "x".repeat(4000);
      const client = async (c: number) => {
        for (let i = 0; i < WRITES_PER_CLIENT; i++) {
          const id = ((c * WRITES_PER_CLIENT + i) % 50) + 1;
          const patched = await send(server.url, `/api/v1/products/${id}`, {
            method: "PATCH",
            body: { description: `${i}${description}` },
          });
          expect(patched.status).toBe(200);
          if (i % 10 === 0)
            expect((await send(server.url, "/api/v1/products?limit=5")).status).toBe(200);
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      // the limit is checked once a second: within two, the WAL is back under it
      const deadline = Date.now() + 10_000;
      while (walSize(wal) > LIMIT && Date.now() < deadline) await Bun.sleep(50);
      expect(walSize(wal)).toBeLessThanOrEqual(LIMIT);
    } finally {
      clearInterval(sampler);
      expect(await server.signal("SIGTERM")).toBe(0);
    }
    // 4,800 writes of ~8 KB each. The limit is checked once a second, so the WAL may pass it
    // by a second of writes; unbounded (or at the default 64 MiB limit) it reaches ~40 MB.
    expect(largest).toBeGreaterThan(LIMIT);
    expect(largest).toBeLessThan(24 * LIMIT);
  },
  120_000,
);
