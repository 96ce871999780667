import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { loadFixture } from "../src/load/load";
import { send, tempDir, testStore } from "./helpers";
import { type ServerProcess, spawnServer } from "./process";
import { TEST_LIBSQL, testLocation } from "./sqld";

const dir = tempDir("storeapi-healthz-");
const data = join(dir, "data");
let server: ServerProcess;
beforeAll(async () => {
  await loadFixture(await testLocation(data), { stores: [testStore()] });
  server = await spawnServer(data);
});
afterAll(async () => {
  await server.signal("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

const healthz = () => send(server.url, "/healthz", { host: "anything.example", key: null });

/** Polls /healthz until it answers `status` (the probe runs every second; bounded at 20 s). */
async function healthzBecomes(status: number) {
  let answer = await healthz();
  for (let i = 0; i < 100 && answer.status !== status; i++) {
    await Bun.sleep(200);
    answer = await healthz();
  }
  return answer;
}

const unhealthy = (message: string) => ({
  ok: false,
  error: { code: "service_unavailable", message },
});

test("healthy: 200 without a key", async () => {
  const answer = await healthz();
  expect(answer.status).toBe(200);
  expect(answer.json).toEqual({ ok: true, data: { status: "ok" } });
}, 120_000);

// Breaks the data directory on disk; on a server /healthz reads the registry there.
test.skipIf(TEST_LIBSQL)(
  "503 naming the data directory while it cannot be written, 200 again after",
  async () => {
    // Root ignores permission bits: a directory where the probe writes its file makes the write fail.
    mkdirSync(join(data, ".healthz-probe"));
    const sick = await healthzBecomes(503);
    expect(sick.json).toEqual(unhealthy("Unhealthy: the data directory is not writable."));
    expect(sick.headers.get("content-type")).toBe("application/json; charset=utf-8");
    rmdirSync(join(data, ".healthz-probe"));
    expect((await healthzBecomes(200)).json).toEqual({ ok: true, data: { status: "ok" } });
  },
  120_000,
);

// Breaks platform.db on disk, in place.
test.skipIf(TEST_LIBSQL)(
  "503 naming the platform database while it cannot be read, 200 again after",
  async () => {
    const platformDb = join(data, "platform.db");
    const header = readFileSync(platformDb).subarray(0, 100);
    const file = openSync(platformDb, "r+");
    try {
      writeSync(file, Buffer.alloc(100, "not a database "), 0, 100, 0);
      const sick = await healthzBecomes(503);
      expect(sick.json).toEqual(unhealthy("Unhealthy: the platform database cannot be read."));
    } finally {
      writeSync(file, header, 0, 100, 0);
      closeSync(file);
    }
    expect((await healthzBecomes(200)).status).toBe(200);
    expect(server.stdout()).toContain(
      '"msg":"health check failed: the platform database cannot be read"',
    );
  },
  120_000,
);

// Moves another file over platform.db, then puts the server's own back.
test.skipIf(TEST_LIBSQL)(
  "503 naming platform.db replaced while another file is in its place, 200 again after",
  async () => {
    const platformDb = join(data, "platform.db");
    renameSync(platformDb, join(dir, "platform.db.aside"));
    copyFileSync(join(dir, "platform.db.aside"), platformDb);
    const sick = await healthzBecomes(503);
    expect(sick.json).toEqual(
      unhealthy(
        "Unhealthy: platform.db was replaced under the server (restart it to use the new file).",
      ),
    );
    renameSync(join(dir, "platform.db.aside"), platformDb);
    expect((await healthzBecomes(200)).status).toBe(200);
  },
  120_000,
);

// Removes the data directory.
test.skipIf(TEST_LIBSQL)(
  "503 naming both when the data directory is gone",
  async () => {
    renameSync(data, join(dir, "moved"));
    writeFileSync(data, "a file where the data directory was\n");
    const sick = await healthzBecomes(503);
    expect(sick.json).toEqual(
      unhealthy(
        "Unhealthy: the platform database cannot be read; the data directory is not writable.",
      ),
    );
    rmSync(data);
    renameSync(join(dir, "moved"), data);
    expect((await healthzBecomes(200)).status).toBe(200);
  },
  120_000,
);
