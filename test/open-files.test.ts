import { afterAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { loadFixture } from "../src/load/load";
import { type RlimitCalls, raiseOpenFilesLimitWith } from "../src/runtime/open-files";
import { tempDir, testStore } from "./helpers";
import { serveCommand } from "./process";

/** libc as a fake: a limit in memory; `setrlimit` fails when `refuse` is set. */
function fakeLibc(soft: bigint, hard: bigint, { readable = true, refuse = false } = {}) {
  const state = { soft, hard, sets: 0 };
  const calls: RlimitCalls = {
    getrlimit: (_, limit) => {
      if (!readable) return -1;
      limit[0] = state.soft;
      limit[1] = state.hard;
      return 0;
    },
    setrlimit: (_, limit) => {
      state.sets++;
      if (refuse) return -1;
      state.soft = limit[0]!;
      return 0;
    },
  };
  return { calls, state };
}

test("the soft open-files limit is raised to the hard one", () => {
  const { calls, state } = fakeLibc(1024n, 20_000n);
  expect(raiseOpenFilesLimitWith(calls)).toEqual({ soft: 20_000, hard: 20_000 });
  expect(state.soft).toBe(20_000n);
});

test("a soft limit already at the hard one is left alone", () => {
  const { calls, state } = fakeLibc(4096n, 4096n);
  expect(raiseOpenFilesLimitWith(calls)).toEqual({ soft: 4096, hard: 4096 });
  expect(state.sets).toBe(0);
});

test("a refused raise reports the limit unchanged; an unreadable one reports null", () => {
  expect(raiseOpenFilesLimitWith(fakeLibc(1024n, 20_000n, { refuse: true }).calls)).toEqual({
    soft: 1024,
    hard: 20_000,
  });
  expect(raiseOpenFilesLimitWith(fakeLibc(1024n, 20_000n, { readable: false }).calls)).toBeNull();
});

test("an unlimited hard limit (RLIM_INFINITY) reads as the largest safe integer", () => {
  const { calls } = fakeLibc(1024n, 2n ** 64n - 1n);
  expect(raiseOpenFilesLimitWith(calls)).toEqual({
    soft: Number.MAX_SAFE_INTEGER,
    hard: Number.MAX_SAFE_INTEGER,
  });
});

const dataDir = tempDir("storeapi-open-files-");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** The shell's hard open-files limit, or null where it cannot be told. */
function hardLimit(): number | null {
  const answer = Bun.spawnSync(["sh", "-c", "ulimit -Hn"]).stdout.toString().trim();
  return /^\d+$/.test(answer) ? Number(answer) : null;
}

const hard = hardLimit();

/** `storeapi serve …` run by `sh` after `limits` (ulimit commands), so the server starts under them. */
const serveUnder = (limits: string, ...flags: string[]) => [
  "sh",
  "-c",
  `${limits} && exec "$@"`,
  "sh",
  ...serveCommand(dataDir),
  "--allow-http",
  ...flags,
];

/**
 * Starts `serve` under `limits` and reads its log until the `listening` line: the process,
 * its lines so far (parsed), and the API's URL. The rest of its stdout is drained.
 */
async function startUnder(limits: string, ...flags: string[]) {
  const proc = Bun.spawn(serveUnder(limits, ...flags), {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: 120_000,
  });
  let output = "";
  const decoder = new TextDecoder();
  const reader = proc.stdout.getReader();
  while (!output.includes('"listening"')) {
    const chunk = await reader.read();
    if (chunk.done) break;
    output += decoder.decode(chunk.value);
  }
  (async () => {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {}
  })().catch(() => {});
  const lines = output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const listening = lines.find((line) => line.msg === "listening");
  if (!listening) throw new Error(`serve did not start: ${output}`);
  return { proc, lines, listening, url: new URL(listening.url as string) };
}

// Under Bun and under Deno (STOREAPI_BIN=scripts/storeapi-deno): each runtime's edge calls libc.
test.skipIf(process.platform !== "linux" || hard === null || hard <= 512)(
  "serve raises a low soft open-files limit to the hard one and reports it",
  async () => {
    const { proc, listening } = await startUnder("ulimit -Sn 512");
    proc.kill("SIGTERM");
    await proc.exited;
    expect(listening.openFilesLimit).toBe(hard!);
  },
);

test.skipIf(process.platform !== "linux" || hard === null || hard < 2048)(
  "serve refuses a --max-open-stores its open-files limit cannot hold, naming the most it can",
  async () => {
    const refused = Bun.spawnSync(
      serveUnder("ulimit -Sn 1024 && ulimit -Hn 2048", "--max-open-stores", "147"),
      { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 60_000 },
    );
    expect([refused.exitCode, refused.stderr.toString()]).toEqual([
      1,
      "storeapi: --max-open-stores 147 needs more open files than this process may have (2048, ulimit -n): give at most 146, or raise the limit\n",
    ]);
  },
);

test.skipIf(process.platform !== "linux" || hard === null || hard < 1024)(
  "under a limit too low for any store beside the connections' share, serve takes up to 16 (the default's least) and says to raise it",
  async () => {
    const limits = "ulimit -Sn 1024 && ulimit -Hn 1024";
    const refused = Bun.spawnSync(serveUnder(limits, "--max-open-stores", "17"), {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      timeout: 60_000,
    });
    // Before, any value was refused with "give at most 0", though the default ran 16.
    expect([refused.exitCode, refused.stderr.toString()]).toEqual([
      1,
      "storeapi: --max-open-stores 17 needs more open files than this process may have (1024, ulimit -n): give at most 16, or raise the limit\n",
    ]);
    const { proc, lines, listening } = await startUnder(limits, "--max-open-stores", "4");
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const warning = lines.find((l) => String(l.msg).startsWith("the open-files limit"));
    expect(warning).toMatchObject({
      level: "warn",
      msg: "the open-files limit leaves little room for stores beside the 1,024 descriptors kept for connections: raise it (ulimit -n, LimitNOFILE in the unit)",
      openFilesLimit: 1024,
      maxOpenStores: 4,
    });
    expect(listening.maxOpenStores).toBe(4);
  },
);

/**
 * Run by a process with 64 descriptors at most: the health probe and a store that cannot
 * be opened before and after it has used up all of them, as JSON.
 */
const OUT_OF_DESCRIPTORS_SCRIPT = `
import { openSync } from "node:fs";
import { InaccessibleDatabase } from "${join(import.meta.dir, "../src/db/driver")}";
import { FileLocation } from "${join(import.meta.dir, "../src/db/location")}";
import { Platform } from "${join(import.meta.dir, "../src/db/platform")}";
import { HealthProbe } from "${join(import.meta.dir, "../src/health")}";
import { bunRuntime } from "${join(import.meta.dir, "../src/runtime/bun")}";
import { useRuntime } from "${join(import.meta.dir, "../src/runtime/runtime")}";
useRuntime(bunRuntime);
const dir = process.argv[2];
const platform = await Platform.open(new FileLocation(dir));
const logged = [];
const health = new HealthProbe(dir, (message) => logged.push(message), platform.db);
await health.probe();
const before = health.problem?.message ?? null;
const held = [];
for (;;) {
  try { held.push(openSync("/dev/null", "r")); } catch { break; }
}
await health.probe();
const store = new InaccessibleDatabase(dir + "/stores/shop1.db", null).message.slice(dir.length);
console.log(JSON.stringify({ before, after: health.problem?.message, logged, store }));
`;

test.skipIf(process.platform !== "linux")(
  "a process out of file descriptors says so, not that its files are damaged or unwritable",
  async () => {
    const dir = join(dataDir, "descriptors");
    await loadFixture(dir, { stores: [testStore()] });
    const script = join(dataDir, "out-of-descriptors.ts");
    writeFileSync(script, OUT_OF_DESCRIPTORS_SCRIPT);
    const run = Bun.spawnSync(
      ["sh", "-c", 'ulimit -n 64 && exec "$@"', "sh", process.execPath, script, dir],
      {
        stdout: "pipe",
        stderr: "pipe",
        timeout: 60_000,
      },
    );
    const why =
      "this process has no file descriptors left (too many connections and open stores for its open-files limit, ulimit -n)";
    // Before: "the platform database cannot be read; the data directory is not writable",
    // and "SQLite could not open it".
    expect(JSON.parse(run.stdout.toString() || run.stderr.toString())).toEqual({
      before: null,
      after: `Unhealthy: ${why}.`,
      logged: [`health check failed: ${why}`],
      store: `/stores/shop1.db cannot be opened: ${why}`,
    });
  },
);

// Under Bun and under Deno (STOREAPI_BIN=scripts/storeapi-deno), whose server stopped for
// good, its process with it, when it could not accept a connection.
test.skipIf(process.platform !== "linux" || hard === null || hard < 256)(
  "idle connections past the open-files limit: the server lives, and answers once they close",
  async () => {
    const { proc, url } = await startUnder("ulimit -Sn 256 && ulimit -Hn 256");
    const sockets: Socket[] = [];
    for (let i = 0; i < 300; i++)
      sockets.push(connect(Number(url.port), url.hostname).on("error", () => {}));
    await Bun.sleep(2_000); // the server has accepted what it could, and failed on the rest
    for (const socket of sockets) socket.destroy();
    let status = 0;
    for (let i = 0; i < 60 && status !== 200; i++) {
      await Bun.sleep(500);
      status = await fetch(`${url.origin}/healthz`).then(
        (answer) => answer.status,
        () => 0,
      );
    }
    expect([status, proc.exitCode]).toEqual([200, null]);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  },
  120_000,
);
