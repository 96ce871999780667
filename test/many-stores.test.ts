import { afterAll, expect, test } from "bun:test";
import { copyFileSync, readdirSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { Platform } from "../src/db/platform";
import { storeDbPath } from "../src/db/pool";
import { loadFixture } from "../src/load/load";
import { KEYS, tempDir, testStore } from "./helpers";
import { type ServerProcess, spawnServer } from "./process";
import { TEST_LIBSQL } from "./sqld";

const STORES = 2_000;
const MAX_OPEN = 16;
const dataDir = tempDir("storeapi-many-");
let server: ServerProcess | undefined;
let slugsOfRotation: string[] = [];

afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dataDir, { recursive: true, force: true });
});

/** 2,000 stores with the same keys: one loaded store's database copied under every slug. */
async function makeStores(): Promise<string[]> {
  await loadFixture(dataDir, { stores: [testStore({ slug: "s0", domain: "s0.test" })] });
  const platform = await Platform.open(dataDir);
  const template = (await platform.getStore("s0"))!;
  const slugs = ["s0"];
  for (let i = 1; i < STORES; i++) {
    const slug = `s${i}`;
    copyFileSync(storeDbPath(dataDir, "s0"), storeDbPath(dataDir, slug));
    await platform.addStore({ ...template, slug, domain: `${slug}.test` });
    slugs.push(slug);
  }
  await platform.close();
  return slugs;
}

const openFiles = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

// Copies store files to make 2,000 stores.
test.skipIf(process.platform !== "linux" || TEST_LIBSQL)(
  "2,000 stores served in rotation with a small --max-open-stores keep open files bounded",
  async () => {
    const t0 = Date.now();
    const slugs = await makeStores();
    slugsOfRotation = slugs;
    if (process.env.TEST_LOG === "1") console.log("made stores in", Date.now() - t0);
    server = await spawnServer(dataDir, ["--max-open-stores", String(MAX_OPEN)]);
    const pid = server.proc.pid;
    let mostOpenFiles = 0;
    const failures: string[] = [];
    for (const [i, slug] of slugs.entries()) {
      const answer = await fetch(`${server.url}/api/v1/orders?limit=1`, {
        headers: { Host: `${slug}.test`, Authorization: `Bearer ${KEYS.read}` },
      });
      await answer.arrayBuffer();
      if (answer.status !== 200) failures.push(`${slug}: ${answer.status}`);
      if (i % 100 === 0) mostOpenFiles = Math.max(mostOpenFiles, openFiles(pid));
    }
    expect(failures).toEqual([]);
    // Open stores (16 × 2 connections × 3 files), closed ones waiting for the collector
    // (at most 2 × 16 connections before one is asked for), the checkpoint thread's 64
    // connections, sockets: far below 2,000 stores' worth (6,000 files). The client driver
    // hands closed connections' files back later, the later the busier the machine (601
    // seen under a concurrent build), hence the room above ~400; a leak would pass 6,000.
    if (process.env.TEST_LOG === "1") console.log("most open files", mostOpenFiles);
    expect(mostOpenFiles).toBeLessThan(1000);
  },
  120_000,
);

/** Sends one request per store on its own connection and hangs up on all of them after `ms`. */
async function requestsThenHangUp(url: string, slugs: string[], ms: number): Promise<void> {
  const { hostname, port } = new URL(url);
  const sockets = slugs.map((slug) =>
    connect(Number(port), hostname, function (this: Socket) {
      this.write(
        `GET /api/v1/orders?limit=1 HTTP/1.1\r\nHost: ${slug}.test\r\n` +
          `Authorization: Bearer ${KEYS.read}\r\n\r\n`,
      );
    }).on("error", () => {}),
  );
  await Bun.sleep(ms);
  for (const socket of sockets) socket.destroy();
}

test.skipIf(process.platform !== "linux" || TEST_LIBSQL)(
  "a stop lets the requests of clients that hung up finish before it closes the stores",
  async () => {
    if (!server) throw new Error("needs the server of the test before");
    // Cold stores open one at a time: most of these are still queued when the clients go.
    await requestsThenHangUp(server.url, slugsOfRotation.slice(-300), 100);
    expect(await server.signal("SIGTERM")).toBe(0);
    const problems = server
      .stdout()
      .split("\n")
      .filter((line) => line.includes('"level":"error"'));
    expect({ errors: problems.length, first: problems[0] as string | undefined }).toEqual({
      errors: 0,
      first: undefined,
    });
    server = undefined;
  },
  120_000,
);

test.skipIf(TEST_LIBSQL)(
  "writes alternating between two stores with --max-open-stores 1 log no error",
  async () => {
    const dir = tempDir("storeapi-evict-");
    await loadFixture(dir, {
      stores: ["s0", "s1"].map((slug) =>
        testStore({
          slug,
          domain: `${slug}.test`,
          orders: [{ id: 1, number: 1, status: 1, total: 1 }],
        }),
      ),
    });
    const evicting = await spawnServer(dir, ["--max-open-stores", "1"]);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) {
        const answer = await fetch(`${evicting.url}/api/v1/orders/1`, {
          method: "PATCH",
          headers: {
            Host: `s${i % 2}.test`,
            Authorization: `Bearer ${KEYS.all}`,
            "Content-Type": "application/json",
          },
          body: JSON.stringify({ adminNotes: `note ${i}` }),
        });
        await answer.arrayBuffer();
        statuses.push(answer.status);
        await Bun.sleep(100);
      }
      expect(statuses).toEqual(Array(40).fill(200));
    } finally {
      expect(await evicting.signal("SIGTERM")).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
    // Each eviction asks the checkpoint thread to fold the store's WAL in while the server
    // closes it; that thread found the file busy and logged "checkpoint of … failed".
    const errors = evicting
      .stdout()
      .split("\n")
      .filter((line) => line.includes('"level":"error"'));
    expect(errors).toEqual([]);
  },
  60_000,
);
