/**
 * `npm run bench`: the compiled server against its own floors, in one run.
 *
 *   bun scripts/bench/run.ts [--quick] [--rounds N] [--seconds S] [--warmup S]
 *                            [--connections N] [--scale F] [--regenerate] [--no-write]
 *                            [--only ID,ID…] [--profile ID] [--inline-checkpoints]
 *                            [--max-open-stores N]
 *                            [--log-level info|warn|…]
 *
 * 1. generates (or reuses) the bench data in bench/tmp/ (scripts/bench/generate.ts);
 * 2. measures cold start of ./storeapi to its first /healthz answer;
 * 3. starts ./storeapi, a raw Bun.serve and a bare Hono + libsql app (scripts/bench/anchor.ts)
 *    on one core, and drives them from the other with wrk (autocannon if wrk is missing),
 *    interleaving anchor and real scenario round by round;
 *    The same sources under Deno (scripts/storeapi-deno, on the same data) answer GET one order
 *    and PATCH as a ratio to the compiled binary, each round's pair back to back;
 * 4. times single 500-item batches, touches all small stores and reads the server's RSS;
 * 5. prints the table and writes bench/results.md.
 * --only runs just the named scenarios with their anchors (no results file); --profile ID runs only that scenario (and its anchor) against `bun --cpu-prof-md src/main.ts`
 * and leaves the profile in bench/tmp/profile/. --log-level is the server's (default warn: no
 * request lines; `info`, serve's default, writes one per request). Loopback only; every child is killed at the
 * end or at the deadline.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import Database from "libsql";
import { storeDbPath } from "../../src/db/pool";
import { encodeCursor } from "../../src/http/cursor";
import { ORDER_LIST_COLUMNS } from "../../src/routes/orders/row";
import {
  type BenchData,
  BIG,
  BIG_KEY,
  ensureBenchData,
  FULL_SIZES,
  orderCreatedAt,
  resetMutations,
  smallDomain,
  smallKey,
} from "./generate";
import { startLibsqlCopy } from "./libsql";
import {
  chooseTool,
  type LoadResult,
  type LoadSpec,
  runLoad,
  type Tool,
  WRK_INSTALL_HINT,
} from "./load";
import {
  freePort,
  freePorts,
  killAll,
  memoryOf,
  type Spawned,
  spawnPinned,
  stop,
  waitFor200,
  waitUntilIdle,
} from "./processes";
import {
  machineDescription,
  markdownReport,
  median,
  printReport,
  type ScenarioSummary,
  type Target,
} from "./report";
import { sendOnce } from "./requests";

const ROOT = resolve(import.meta.dir, "../..");
const TMP = join(ROOT, "bench/tmp");
const RESULTS = join(ROOT, "bench/results.md");
/** Making the data (the first time) and the sqld copy (~13 min the first time), then measuring (~30 min). */
const PREPARE_DEADLINE_MS = 30 * 60_000;
const MEASURE_DEADLINE_MS = 45 * 60_000;
const API = "/api/v1";

const { values: flags } = parseArgs({
  args: process.argv.slice(2),
  options: {
    quick: { type: "boolean" },
    rounds: { type: "string" },
    seconds: { type: "string" },
    warmup: { type: "string" },
    connections: { type: "string" },
    scale: { type: "string" },
    regenerate: { type: "boolean" },
    "no-write": { type: "boolean" },
    profile: { type: "string" },
    only: { type: "string" },
    "inline-checkpoints": { type: "boolean" },
    "max-open-stores": { type: "string" },
    "log-level": { type: "string" },
  },
  strict: true,
});

const quick = flags.quick === true;
const settings = {
  rounds: Number(flags.rounds ?? (quick ? 1 : 3)),
  seconds: Number(flags.seconds ?? (quick ? 2 : 8)),
  warmup: Number(flags.warmup ?? (quick ? 1 : 2)),
  connections: Number(flags.connections ?? 32),
  coldStarts: quick ? 3 : 5,
  batchTimings: quick ? 5 : 9,
  scale: Number(flags.scale ?? 1),
  logLevel: flags["log-level"] ?? "warn",
};
const sizes = {
  orders: Math.round(FULL_SIZES.orders * settings.scale),
  products: Math.round(FULL_SIZES.products * settings.scale),
  customers: Math.round(FULL_SIZES.customers * settings.scale),
  smallStores: Math.round(FULL_SIZES.smallStores * settings.scale),
};

// Server on core 0, this process and the load generator on core 1, when there are two or more.
// All of the machine's cores, not this process's affinity (which an inherited taskset may narrow).
const cores = cpus().length;
const SERVER_CPU = cores >= 2 ? "0" : null;
const LOAD_CPU = cores >= 2 ? "1" : null;

/** --inline-checkpoints: the server checkpoints on its request thread (the A/B of the checkpoint worker). */
const SERVER_ENV: Record<string, string> = flags["inline-checkpoints"]
  ? { STOREAPI_CHECKPOINTS: "inline" }
  : {};

type Target3 = "real" | "hono" | "static" | "deno" | "libsql" | "replica";

interface Scenario {
  id: string;
  label: string;
  target: Target3;
  spec: Omit<LoadSpec, "baseUrl" | "nonce">;
  connections: number;
  /** The anchor scenario this one is divided by. */
  anchor?: string;
  /** Checks one answer beyond its status; returns a problem or null. */
  check?: (body: string) => string | null;
  /** A second load run at the same time, touching cold stores (its figures are not reported). */
  churn?: { stores: NonNullable<LoadSpec["stores"]>; connections: number };
}

/** A round's result, with what the real server's pool and memory showed after it. */
type RoundResult = LoadResult & { missesPerSec?: number; rssMb?: number; openFiles?: number };

/** Sets of at most this many stores are touched before each round, so the pool holds them. */
const WARM_STORES_MAX = 2_000;

function log(message: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

const PROFILE_DIR = join(TMP, "profile");

function ensureBinary(): { command: string[]; note: string | null } {
  if (flags.profile) {
    const command = [
      process.execPath,
      "--cpu-prof-md",
      `--cpu-prof-dir=${PROFILE_DIR}`,
      join(ROOT, "src/main.ts"),
    ];
    return {
      command,
      note: `profiling run: bun --cpu-prof-md src/main.ts, not the compiled binary`,
    };
  }
  const binary = join(ROOT, "storeapi");
  const build = spawnSync(process.execPath, [join(ROOT, "scripts/build.ts"), "--if-stale"], {
    cwd: ROOT,
    stdio: "inherit",
  });
  if (build.status === 0 && existsSync(binary)) return { command: [binary], note: null };
  const note =
    "./storeapi could not be built: measured `bun src/main.ts` instead of the compiled binary";
  log(note);
  return { command: [process.execPath, join(ROOT, "src/main.ts")], note };
}

function serveArgs(dataDir: string, port: number): string[] {
  return [
    "serve",
    "--data",
    dataDir,
    "--listen",
    `127.0.0.1:${port}`,
    "--rate-limit",
    "100000000",
    "--allow-http",
    "--log-level",
    settings.logLevel,
    ...(flags["max-open-stores"] ? ["--max-open-stores", flags["max-open-stores"]] : []),
  ];
}

async function measureColdStart(command: string[], dataDir: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < settings.coldStarts; i++) {
    const port = freePort();
    const server = spawnPinned(
      [...command, ...serveArgs(dataDir, port)],
      SERVER_CPU,
      join(TMP, "coldstart.log"),
    );
    try {
      times.push(await waitFor200(`http://127.0.0.1:${port}/healthz`, server));
    } finally {
      await stop(server);
    }
  }
  return times;
}

/** A cursor ~all of the table deep: signed with the data directory's secret, as the server would. */
function deepCursor(data: BenchData): { cursor: string; afterId: number } {
  const platform = new Database(join(data.dir, "platform.db"));
  const row = platform.prepare("SELECT value FROM meta WHERE key = 'secret'").get() as
    | { value: string }
    | undefined;
  platform.close();
  if (!row) throw new Error("platform.db has no cursor secret");
  const afterId = Math.max(51, data.sizes.orders - Math.round(data.sizes.orders * 0.999));
  const scope = { list: "orders", store: BIG.slug, filters: "[]" };
  return {
    cursor: encodeCursor(row.value, scope, { sort: orderCreatedAt(afterId), id: afterId }),
    afterId,
  };
}

/** The statement src/http/pagination.ts builds for GET /orders?limit=50&cursor=… (no filters). */
const LIST_QUERY_SQL = `SELECT ${ORDER_LIST_COLUMNS} FROM orders WHERE (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT 51`;

function queryPlan(data: BenchData): string[] {
  const db = new Database(storeDbPath(data.dir, BIG.slug), { readonly: true });
  const rows = db
    .prepare(`EXPLAIN QUERY PLAN ${LIST_QUERY_SQL}`)
    .all(orderCreatedAt(1001), 1001) as Array<{ detail: string }>;
  db.close();
  return rows.map((r) => r.detail);
}

const listCheck = (expectFirstId?: number) => (body: string) => {
  const parsed = JSON.parse(body) as { data?: Array<{ id: number }> };
  if (!Array.isArray(parsed.data) || parsed.data.length !== 50)
    return `expected 50 rows, got ${parsed.data?.length}`;
  if (expectFirstId !== undefined && parsed.data[0].id !== expectFirstId)
    return `expected first id ${expectFirstId}, got ${parsed.data[0].id}`;
  return null;
};

function scenarios(data: BenchData, deep: { cursor: string; afterId: number }): Scenario[] {
  const c = settings.connections;
  const auth = { host: BIG.domain, key: BIG_KEY };
  const orders = data.sizes.orders;
  const products = data.sizes.products;
  const get = (path: string, maxId = 1) => ({
    method: "GET" as const,
    path,
    kind: "fixed" as const,
    maxId,
    ...auth,
  });
  const patch = {
    method: "PATCH" as const,
    path: `${API}/orders/{id}`,
    kind: "patch_order" as const,
    maxId: orders,
    ...auth,
  };
  const customer = {
    method: "POST" as const,
    path: `${API}/customers`,
    kind: "create_customer" as const,
    maxId: 1,
    ...auth,
  };
  const batch = {
    method: "POST" as const,
    path: `${API}/products/batch`,
    kind: "product_batch" as const,
    maxId: products,
    batch: 500,
    ...auth,
  };
  const batchConnections = Math.min(c, 4);
  return [
    {
      id: "static",
      label: "anchor: Bun.serve static JSON",
      target: "static",
      spec: get("/"),
      connections: c,
    },
    {
      id: "healthz",
      label: "GET /healthz",
      target: "real",
      spec: get("/healthz"),
      connections: c,
      anchor: "static",
    },
    {
      id: "a-point",
      label: "anchor: point read",
      target: "hono",
      spec: get(`${API}/orders/{id}`, orders),
      connections: c,
    },
    {
      id: "get-order",
      label: "GET /orders/{id}",
      target: "real",
      spec: get(`${API}/orders/{id}`, orders),
      connections: c,
      anchor: "a-point",
    },
    {
      id: "deno-get-order",
      label: "GET /orders/{id} under Deno",
      target: "deno",
      spec: get(`${API}/orders/{id}`, orders),
      connections: c,
      anchor: "get-order",
    },
    {
      id: "a-list",
      label: "anchor: keyset list of 50",
      target: "hono",
      spec: get(`${API}/orders?limit=50`),
      connections: c,
    },
    {
      id: "list-1",
      label: "GET /orders?limit=50 (page 1)",
      target: "real",
      spec: get(`${API}/orders?limit=50`),
      connections: c,
      anchor: "a-list",
      check: listCheck(orders),
    },
    {
      id: "list-deep",
      label: `GET /orders?limit=50 (${(orders - deep.afterId + 1).toLocaleString("en")} rows deep)`,
      target: "real",
      spec: get(`${API}/orders?limit=50&cursor=${encodeURIComponent(deep.cursor)}`),
      connections: c,
      anchor: "a-list",
      check: listCheck(deep.afterId - 1),
    },
    {
      id: "a-products",
      label: "anchor: products list of 50",
      target: "hono",
      spec: get(`${API}/products?limit=50`),
      connections: c,
    },
    {
      id: "products",
      label: "GET /products?limit=50",
      target: "real",
      spec: get(`${API}/products?limit=50`),
      connections: c,
      anchor: "a-products",
      check: listCheck(),
    },
    {
      id: "a-update",
      label: "anchor: single-row UPDATE",
      target: "hono",
      spec: patch,
      connections: c,
    },
    {
      id: "patch",
      label: "PATCH /orders/{id}",
      target: "real",
      spec: patch,
      connections: c,
      anchor: "a-update",
    },
    {
      id: "get-order-libsql",
      label: "GET /orders/{id} on a libSQL server",
      target: "libsql",
      spec: get(`${API}/orders/{id}`, orders),
      connections: c,
      anchor: "get-order",
    },
    {
      id: "get-order-replica",
      label: "GET /orders/{id} on a libSQL server, --libsql-replicas",
      target: "replica",
      spec: get(`${API}/orders/{id}`, orders),
      connections: c,
      anchor: "get-order",
    },
    {
      id: "patch-libsql",
      label: "PATCH /orders/{id} on a libSQL server",
      target: "libsql",
      spec: patch,
      connections: c,
      anchor: "patch",
    },
    {
      id: "patch-replica",
      label: "PATCH /orders/{id} on a libSQL server, --libsql-replicas",
      target: "replica",
      spec: patch,
      connections: c,
      anchor: "patch",
    },
    {
      id: "deno-patch",
      label: "PATCH /orders/{id} under Deno",
      target: "deno",
      spec: patch,
      connections: c,
      anchor: "patch",
    },
    {
      id: "a-insert",
      label: "anchor: INSERT customer",
      target: "hono",
      spec: customer,
      connections: c,
    },
    {
      id: "customers",
      label: "POST /customers (Idempotency-Key)",
      target: "real",
      spec: customer,
      connections: c,
      anchor: "a-insert",
    },
    {
      id: "a-batch",
      label: "anchor: 500 UPDATEs in one transaction",
      target: "hono",
      spec: batch,
      connections: batchConnections,
    },
    {
      id: "batch",
      label: "POST /products/batch (500 items)",
      target: "real",
      spec: batch,
      connections: batchConnections,
      anchor: "a-batch",
    },
    ...manyStoreScenarios(data),
  ];
}

/**
 * Issue 15: the same request spread over many small stores, each divided by that request
 * on one small store (same server, same run). Small stores have 5 orders each.
 */
function manyStoreScenarios(data: BenchData): Scenario[] {
  const c = settings.connections;
  const total = data.sizes.smallStores;
  const spread = (count: number, how: "uniform" | "zipf") => ({
    count: Math.min(count, total),
    spread: how,
  });
  const getOne = {
    method: "GET" as const,
    path: `${API}/orders/{id}`,
    kind: "fixed" as const,
    maxId: 5,
  };
  const patchOne = { ...getOne, method: "PATCH" as const, kind: "patch_order" as const };
  const many = (
    id: string,
    label: string,
    base: Scenario["spec"],
    stores: LoadSpec["stores"],
    anchor: string,
  ): Scenario => ({
    id,
    label,
    target: "real",
    spec: { ...base, stores },
    connections: c,
    anchor,
  });
  return [
    {
      id: "one-get",
      label: "one store: GET /orders/{id}",
      target: "real",
      spec: { ...getOne, stores: spread(1, "uniform") },
      connections: c,
    },
    many(
      "get-2k",
      "GET /orders/{id} over 2,000 stores",
      getOne,
      spread(2_000, "uniform"),
      "one-get",
    ),
    many(
      "get-10k",
      "GET /orders/{id} over 10,000 stores",
      getOne,
      spread(10_000, "uniform"),
      "one-get",
    ),
    many(
      "get-zipf",
      "GET /orders/{id}, Zipf over 10,000 stores",
      getOne,
      spread(10_000, "zipf"),
      "one-get",
    ),
    {
      id: "hot-churn",
      label: "one store: GET /orders/{id} while 4 connections touch cold stores",
      target: "real",
      spec: { ...getOne, stores: spread(1, "uniform") },
      connections: c,
      churn: { stores: { ...spread(10_000, "uniform"), from: 2_001 }, connections: 4 },
      anchor: "one-get",
    },
    {
      id: "one-patch",
      label: "one store: PATCH /orders/{id}",
      target: "real",
      spec: { ...patchOne, stores: spread(1, "uniform") },
      connections: c,
    },
    many(
      "patch-2k",
      "PATCH /orders/{id} over 2,000 stores",
      patchOne,
      spread(2_000, "uniform"),
      "one-patch",
    ),
  ];
}

type Running = Spawned & { url: string; metricsUrl?: string };

interface Servers {
  real: Running;
  hono: Running;
  static: Running;
  /** Started only when a Deno scenario is chosen. */
  deno?: Running;
  /** The same binary with the big store on sqld (scripts/bench/libsql.ts), only when a libSQL scenario is chosen. */
  libsql?: Running;
  /** A second node on the same sqld that reads from embedded replicas (--libsql-replicas). */
  replica?: Running;
  sqld?: Spawned;
}

const SERVER_LOGS = ["server.log", "deno.log", "libsql.log", "replica.log"];

async function startServers(
  command: string[],
  data: BenchData,
  withDeno: boolean,
  withLibsql: boolean,
): Promise<Servers> {
  for (const name of [...SERVER_LOGS, "anchor.log"]) writeFileSync(join(TMP, name), "");
  const start = async (
    cmd: string[],
    port: number,
    health: string,
    logName: string,
    env: Record<string, string> = {},
  ) => {
    const spawned = spawnPinned(cmd, SERVER_CPU, join(TMP, logName), env);
    const url = `http://127.0.0.1:${port}`;
    await waitFor200(`${url}${health}`, spawned);
    return { ...spawned, url };
  };
  const anchor = join(import.meta.dir, "anchor.ts");
  const [realPort, honoPort, staticPort, denoPort, libsqlPort, replicaPort, metricsPort] =
    freePorts(7);
  // A server holds its data directory alone (serve.lock): Deno serves a copy of it.
  const denoData = join(TMP, "deno-data");
  if (withDeno) {
    rmSync(denoData, { recursive: true, force: true });
    cpSync(data.dir, denoData, { recursive: true });
  }
  const deno = [join(ROOT, "scripts/storeapi-deno"), ...serveArgs(denoData, denoPort)];
  /** The binary on the sqld copy, with its own `--data` (node name, replicas) and log. */
  const startOnSqld = (name: string, port: number, flags: string[]) =>
    start(
      [...command, ...serveArgs(join(TMP, `${name}-data`), port), ...flags],
      port,
      "/healthz",
      `${name}.log`,
    );
  const copy = withLibsql
    ? await startLibsqlCopy(data, join(TMP, "sqld"), SERVER_CPU, join(TMP, "libsql.log"))
    : undefined;
  return {
    real: {
      ...(await start(
        [
          ...command,
          ...serveArgs(data.dir, realPort),
          "--metrics-listen",
          `127.0.0.1:${metricsPort}`,
        ],
        realPort,
        "/healthz",
        "server.log",
        SERVER_ENV,
      )),
      metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    },
    hono: await start(
      [process.execPath, anchor, "hono", String(honoPort), storeDbPath(data.dir, BIG.slug)],
      honoPort,
      `${API}/orders/1`,
      "anchor.log",
    ),
    static: await start(
      [process.execPath, anchor, "static", String(staticPort)],
      staticPort,
      "/",
      "anchor.log",
    ),
    deno: withDeno ? await start(deno, denoPort, "/healthz", "deno.log", SERVER_ENV) : undefined,
    libsql: copy && (await startOnSqld("libsql", libsqlPort, copy.flags)),
    replica: copy && (await startOnSqld("replica", replicaPort, copy.replicaFlags)),
    sqld: copy?.sqld,
  };
}

/** One request per scenario first: a scenario whose endpoint is missing or wrong is skipped, not measured. */
async function preflight(
  list: Scenario[],
  servers: Servers,
  nonce: string,
): Promise<Map<string, string>> {
  const skipped = new Map<string, string>();
  for (const scenario of list) {
    const server = servers[scenario.target];
    if (!server) continue;
    const spec = { ...scenario.spec, baseUrl: server.url, nonce };
    try {
      const answer = await sendOnce(spec, 1, `${nonce}-preflight-${scenario.id}`);
      const problem =
        answer.status < 200 || answer.status > 299
          ? `answered ${answer.status}: ${answer.text.slice(0, 160)}`
          : (scenario.check?.(answer.text) ?? null);
      if (problem) skipped.set(scenario.id, problem);
    } catch (error) {
      skipped.set(scenario.id, `request failed: ${(error as Error).message}`);
    }
  }
  for (const [id, reason] of skipped) log(`skipping ${id}: ${reason}`);
  return skipped;
}

/** The real server's pool misses so far (`storeapi_store_pool_misses_total`), or NaN. */
async function poolMisses(server: Running): Promise<number> {
  if (!server.metricsUrl) return Number.NaN;
  const text = await fetch(server.metricsUrl)
    .then((r) => r.text())
    .catch(() => "");
  return Number(/^storeapi_store_pool_misses_total (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
}

/** One scenario's load (and its churn, at the same time) for `seconds`. */
async function runScenario(
  tool: Tool,
  scenario: Scenario,
  spec: LoadSpec,
  seconds: number,
): Promise<LoadResult> {
  const options = { connections: scenario.connections, cpu: LOAD_CPU, seconds };
  const churn = scenario.churn;
  const [result] = await Promise.all([
    runLoad(tool, spec, options),
    churn &&
      runLoad(
        tool,
        { ...spec, stores: churn.stores, nonce: `${spec.nonce}c` },
        { ...options, connections: churn.connections },
      ),
  ]);
  return result;
}

/** The measured run of a real-server scenario, with the pool's misses/s and memory after it. */
async function measureReal(
  tool: Tool,
  scenario: Scenario,
  spec: LoadSpec,
  server: Running,
): Promise<RoundResult> {
  const missesBefore = await poolMisses(server);
  const result = await runScenario(tool, scenario, spec, settings.seconds);
  const missesAfter = await poolMisses(server);
  const memory = await memoryOf(server.pid);
  return {
    ...result,
    missesPerSec: (missesAfter - missesBefore) / settings.seconds,
    rssMb: memory.rssMb,
    openFiles: memory.openFiles,
  };
}

async function measureRounds(
  tool: Tool,
  list: Scenario[],
  servers: Servers,
  skipped: Map<string, string>,
  nonce: string,
) {
  const results = new Map<string, RoundResult[]>(list.map((s) => [s.id, []]));
  for (let round = 1; round <= settings.rounds; round++) {
    for (const scenario of list) {
      if (skipped.has(scenario.id)) continue;
      const server = servers[scenario.target] as Running;
      const spec = {
        ...scenario.spec,
        baseUrl: server.url,
        nonce: `${nonce}${scenario.id}r${round}`,
      };
      const storeCount = scenario.spec.stores?.count ?? 0;
      if (storeCount > 1 && storeCount <= WARM_STORES_MAX) {
        const started = performance.now();
        await touchStores(server.url, storeCount);
        log(
          `touched stores 1..${storeCount} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
        );
      }
      await runScenario(tool, scenario, { ...spec, nonce: `${spec.nonce}w` }, settings.warmup);
      const result: RoundResult =
        scenario.target === "real"
          ? await measureReal(tool, scenario, spec, server)
          : await runScenario(tool, scenario, spec, settings.seconds);
      results.get(scenario.id)?.push(result);
      log(
        `round ${round}/${settings.rounds} ${scenario.id}: ${Math.round(result.rps)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms${result.missesPerSec === undefined ? "" : `, ${Math.round(result.missesPerSec)} misses/s`}${result.errors ? `, ${result.errors} errors` : ""}`,
      );
    }
  }
  return results;
}

function summarize(
  list: Scenario[],
  results: Map<string, RoundResult[]>,
  skipped: Map<string, string>,
): ScenarioSummary[] {
  const byId = new Map(list.map((s) => [s.id, s]));
  return list.map((s) => {
    const allRuns = results.get(s.id) ?? [];
    const anchor = s.anchor ? byId.get(s.anchor) : undefined;
    const allAnchorRuns = s.anchor ? (results.get(s.anchor) ?? []) : [];
    // A round in which the scenario or its anchor answered errors is reported, never counted.
    const clean = allRuns.map((r, i) => r.errors === 0 && (allAnchorRuns[i]?.errors ?? 0) === 0);
    const runs = allRuns.filter((_, i) => clean[i]);
    const anchorRuns = s.anchor
      ? allAnchorRuns.filter((_, i) => clean[i])
      : allAnchorRuns.filter((r) => r.errors === 0);
    const discarded = clean.filter((ok) => !ok).length;
    const ratios = runs.map((r, i) => (anchorRuns[i] ? r.rps / anchorRuns[i].rps : Number.NaN));
    const reason =
      skipped.get(s.id) ??
      (runs.length === 0
        ? discarded
          ? `all ${discarded} round(s) had errors`
          : "not measured"
        : undefined);
    return {
      id: s.id,
      label: s.label,
      target: s.target,
      connections: s.connections,
      rounds: runs.length,
      rps: median(runs.map((r) => r.rps)),
      p50Ms: median(runs.map((r) => r.p50Ms)),
      p99Ms: median(runs.map((r) => r.p99Ms)),
      errors: allRuns.reduce((n, r) => n + r.errors, 0),
      anchorLabel: anchor?.label.replace(/^anchor: /, ""),
      anchorRps: anchorRuns.length ? median(anchorRuns.map((r) => r.rps)) : undefined,
      ratio: anchorRuns.length && runs.length ? median(ratios) : undefined,
      skipped: reason,
      stores:
        s.spec.stores && s.target === "real" ? (s.churn ? "hot" : s.spec.stores.count) : undefined,
      missesPerSec: median(runs.map((r) => r.missesPerSec ?? Number.NaN)),
      rssMb: median(runs.map((r) => r.rssMb ?? Number.NaN)),
      openFiles: median(runs.map((r) => r.openFiles ?? Number.NaN)),
    };
  });
}

/** Sequential single requests: milliseconds each, for the real server and its anchor. */
async function timeSingles(
  list: Scenario[],
  id: string,
  servers: Servers,
  nonce: string,
): Promise<number[]> {
  const scenario = list.find((s) => s.id === id);
  if (!scenario) return [];
  const times: number[] = [];
  for (let i = 0; i < settings.batchTimings; i++) {
    const spec = { ...scenario.spec, baseUrl: (servers[scenario.target] as Running).url, nonce };
    const started = performance.now();
    const answer = await sendOnce(spec, i + 1, `${nonce}-single-${i}`);
    const elapsed = performance.now() - started;
    if (answer.status !== 200) return [];
    times.push(elapsed);
  }
  return times;
}

/** One authenticated request to each small store count..1, 16 at a time (store 1 last, the most recent); returns how many were not 200. */
async function touchStores(url: string, count: number): Promise<number> {
  let next = count;
  let failures = 0;
  const worker = async () => {
    while (next >= 1) {
      const n = next--;
      const response = await fetch(`${url}${API}/products?limit=1`, {
        headers: { host: smallDomain(n), authorization: `Bearer ${smallKey(n)}` },
      });
      await response.arrayBuffer();
      if (response.status !== 200) failures++;
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return failures;
}

const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : "–");
const fmtMb = (value: number | undefined) =>
  value !== undefined && Number.isFinite(value) ? `${value.toFixed(0)} MB` : "–";

/** Issue 15: the hottest store's p99 while cold stores are touched, against its p99 alone. */
function hotP99Target(hot?: ScenarioSummary, alone?: ScenarioSummary): Target {
  const ratio =
    hot && alone && !hot.skipped && !alone.skipped ? hot.p99Ms / alone.p99Ms : Number.NaN;
  return {
    name: "One store's p99 while cold stores are touched vs alone",
    goal: "< 2×",
    measured: Number.isFinite(ratio)
      ? `${ratio.toFixed(2)}× (${hot?.p99Ms.toFixed(2)} vs ${alone?.p99Ms.toFixed(2)} ms)`
      : "–",
    met: Number.isFinite(ratio) ? ratio < 2 : null,
  };
}

function targets(
  summaries: ScenarioSummary[],
  extra: { coldStart: number; rssMb: number; batchMs: number },
): Target[] {
  const s = (id: string) => summaries.find((x) => x.id === id);
  const ratioTarget = (name: string, id: string, goal = 0.5, of = "the bare anchor"): Target => {
    const x = s(id);
    const ratio = x?.skipped ? undefined : x?.ratio;
    return {
      name,
      goal: `≥ ${goal} of ${of}`,
      measured:
        ratio === undefined
          ? (x?.skipped ?? "–")
          : `${ratio.toFixed(2)} (${Math.round(x?.rps ?? 0)} vs ${Math.round(x?.anchorRps ?? 0)} req/s)`,
      met: ratio === undefined ? null : ratio >= goal,
    };
  };
  const page1 = s("list-1");
  const deep = s("list-deep");
  const deepRatio =
    page1 && deep && !page1.skipped && !deep.skipped ? deep.rps / page1.rps : undefined;
  const patch = s("patch");
  const patchP99 = patch && !patch.skipped ? patch.p99Ms : undefined;
  const under = (value: number, limit: number) => (Number.isFinite(value) ? value < limit : null);
  return [
    ratioTarget("GET one order vs bare point read", "get-order"),
    ratioTarget("List of 50 (page 1) vs bare keyset list", "list-1"),
    {
      name: "Deep page vs page 1",
      goal: "within 10% (≥ 0.90 of page 1 req/s)",
      measured: deepRatio === undefined ? "–" : `${deepRatio.toFixed(2)} of page 1`,
      met: deepRatio === undefined ? null : deepRatio >= 0.9,
    },
    ratioTarget("PATCH /orders/{id} vs bare UPDATE", "patch"),
    {
      name: `PATCH p99 at ${settings.connections} connections`,
      goal: "< 5 ms",
      measured: patchP99 === undefined ? "–" : ms(patchP99),
      met: patchP99 === undefined ? null : patchP99 < 5,
    },
    ratioTarget("GET one order over 2,000 stores vs one", "get-2k", 0.9, "one store"),
    ratioTarget("GET one order over 10,000 stores vs one", "get-10k", 0.8, "one store"),
    ratioTarget("GET one order, Zipf over 10,000 stores, vs one", "get-zipf", 0.9, "one store"),
    ratioTarget("PATCH over 2,000 stores vs one", "patch-2k", 0.9, "one store"),
    hotP99Target(s("hot-churn"), s("one-get")),
    {
      name: "RSS after the 10,000-store scenarios",
      goal: "< 500 MB",
      measured: fmtMb(s("get-zipf")?.rssMb),
      met: under(s("get-zipf")?.rssMb ?? Number.NaN, 500),
    },
    ratioTarget("GET one order on a libSQL server vs files", "get-order-replica", 0.5, "files"),
    ratioTarget("PATCH /orders/{id} on a libSQL server vs files", "patch-replica", 0.25, "files"),
    {
      name: "RSS after touching every small store",
      goal: "< 300 MB",
      measured: `${extra.rssMb.toFixed(0)} MB`,
      met: under(extra.rssMb, 300),
    },
    {
      name: "One 500-item batch (median)",
      goal: "< 100 ms",
      measured: ms(extra.batchMs),
      met: under(extra.batchMs, 100),
    },
    {
      name: "Cold start to first /healthz (median)",
      goal: "< 200 ms",
      measured: ms(extra.coldStart),
      met: under(extra.coldStart, 200),
    },
  ];
}

async function main(): Promise<void> {
  const began = performance.now();
  if (LOAD_CPU !== null)
    spawnSync("taskset", ["-p", "-c", LOAD_CPU, String(process.pid)], { stdio: "ignore" });
  mkdirSync(TMP, { recursive: true });
  const tool = chooseTool();
  if (tool === "autocannon") log(WRK_INSTALL_HINT);
  const binary = ensureBinary();
  const data = await ensureBenchData(TMP, sizes, flags.regenerate === true);
  resetMutations(data);
  const nonce = Date.now().toString(36);
  const notes: string[] = [];
  if (binary.note) notes.push(binary.note);
  if (tool === "autocannon") notes.push(WRK_INSTALL_HINT);
  if (SERVER_CPU === null)
    notes.push("one core only: server and load generator share it (no pinning)");

  log(`cold start ×${settings.coldStarts}`);
  const coldStarts =
    flags.profile || flags.only ? [] : await measureColdStart(binary.command, data.dir);

  const deep = deepCursor(data);
  const all = scenarios(data, deep);
  const wanted = flags.profile ?? flags.only;
  const chosen = wanted ? all.filter((s) => wanted.split(",").includes(s.id)) : all;
  if (wanted && chosen.length === 0)
    throw new Error(`no scenario "${wanted}"; choose from ${all.map((s) => s.id).join(", ")}`);
  const anchors = new Set(chosen.map((s) => s.anchor));
  const list = all.filter((s) => chosen.includes(s) || anchors.has(s.id));

  log("starting the server and the anchors");
  const servers = await startServers(
    binary.command,
    data,
    list.some((s) => s.target === "deno"),
    list.some((s) => s.target === "libsql" || s.target === "replica"),
  );
  armDeadline(MEASURE_DEADLINE_MS, "measuring");
  const settleMs = await waitUntilIdle(servers.real.pid);
  log(
    `server idle ${(settleMs / 1000).toFixed(1)} s after its first answer (start-up scan of every store's outbox)`,
  );
  if (servers.deno)
    log(
      `Deno server idle ${((await waitUntilIdle(servers.deno.pid)) / 1000).toFixed(1)} s after its start-up scan`,
    );
  const afterStart = await memoryOf(servers.real.pid);
  const skipped = await preflight(list, servers, nonce);
  if (list.some((s) => (s.spec.stores?.count ?? 0) > 1)) {
    // Otherwise a round over 10,000 stores measures each store's first open, not the pool.
    log(
      `warming: one request to each of ${data.sizes.smallStores.toLocaleString("en")} small stores`,
    );
    await touchStores(servers.real.url, data.sizes.smallStores);
  }
  const results = await measureRounds(tool, list, servers, skipped, nonce);

  log("timing single 500-item batches");
  const batchTimes = await timeSingles(list, "batch", servers, nonce);
  const anchorBatchTimes = await timeSingles(list, "a-batch", servers, nonce);

  log(`touching ${data.sizes.smallStores.toLocaleString("en")} small stores`);
  const before = await memoryOf(servers.real.pid);
  const touchStarted = performance.now();
  const touchFailures =
    flags.profile || flags.only ? 0 : await touchStores(servers.real.url, data.sizes.smallStores);
  const touchSeconds = (performance.now() - touchStarted) / 1000;
  const after = await memoryOf(servers.real.pid);
  if (touchFailures) notes.push(`${touchFailures} of the small-store requests did not answer 200`);

  await Promise.all([
    stop(servers.real),
    stop(servers.hono),
    stop(servers.static),
    servers.deno && stop(servers.deno),
    servers.libsql && stop(servers.libsql),
    servers.replica && stop(servers.replica),
  ]);
  if (servers.sqld) await stop(servers.sqld);
  for (const name of SERVER_LOGS) {
    const serverErrors = (await Bun.file(join(TMP, name)).text())
      .split("\n")
      .filter((l) => l.includes('"level":"error"'));
    if (serverErrors.length) {
      notes.push(
        `the server logged ${serverErrors.length} errors (bench/tmp/${name}); first: ${serverErrors[0].slice(0, 300)}`,
      );
    }
  }

  const summaries = summarize(list, results, skipped);
  const coldStart = median(coldStarts);
  const batchMs = median(batchTimes);
  const report = {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    machine: await machineDescription(),
    settings: [
      `server: ${binary.command.map((p) => p.replace(`${ROOT}/`, "./")).join(" ")} serve --rate-limit 100000000 --allow-http --log-level ${settings.logLevel}`,
      SERVER_CPU === null
        ? "no CPU pinning (one core)"
        : `server and anchors pinned to CPU ${SERVER_CPU}, load generator to CPU ${LOAD_CPU} (taskset)`,
      `load generator: ${tool === "wrk" ? "wrk -t1 with scripts/bench/wrk.lua" : "autocannon"}; ${settings.rounds} round(s) of ${settings.seconds} s per scenario after ${settings.warmup} s warm-up, anchor and real interleaved`,
      `data: one store with ${data.sizes.orders.toLocaleString("en")} orders, ${data.sizes.products.toLocaleString("en")} products, ${data.sizes.customers.toLocaleString("en")} customers; ${data.sizes.smallStores.toLocaleString("en")} small stores${data.generatedIn === null ? " (reused)" : ` (generated in ${data.generatedIn.toFixed(0)} s)`}`,
      "anchors: scripts/bench/anchor.ts on the same database file, `libsql` binding, prepared statements, WAL, synchronous=NORMAL",
      "under Deno: scripts/storeapi-deno serve (the same flags and data), its ratio is to the compiled binary's scenario in the same round",
    ],
    scenarios: summaries,
    extras: [
      [
        "Cold start, spawn to first /healthz 200",
        `${ms(coldStart)} median of ${coldStarts.length} (${coldStarts.map((t) => t.toFixed(0)).join(", ")})`,
      ],
      [
        "One 500-item POST /products/batch",
        `${ms(batchMs)} median of ${batchTimes.length}; bare anchor ${ms(median(anchorBatchTimes))}`,
      ],
      [
        `Server RSS after touching all ${data.sizes.smallStores.toLocaleString("en")} small stores`,
        `${after.rssMb.toFixed(0)} MB (before: ${before.rssMb.toFixed(0)} MB; peak ${after.peakMb.toFixed(0)} MB; ${after.openFiles} open files; ${touchSeconds.toFixed(1)} s for the touches, ${touchFailures} not 200)`,
      ],
      [
        "Server start-up work after the first answer (outbox scan of every store), waited out before measuring",
        `${(settleMs / 1000).toFixed(1)} s; then ${afterStart.rssMb.toFixed(0)} MB RSS, ${afterStart.openFiles} open files`,
      ],
      ["Whole bench", `${((performance.now() - began) / 1000).toFixed(0)} s`],
    ] as Array<[string, string]>,
    targets: targets(summaries, { coldStart, rssMb: after.rssMb, batchMs }),
    queryPlan: { sql: LIST_QUERY_SQL, plan: queryPlan(data) },
    notes,
  };
  printReport(report);
  if (flags.profile) {
    log(`CPU profile of the server in ${PROFILE_DIR}`);
  } else if (flags["no-write"] !== true && settings.scale === 1 && !flags.only) {
    writeFileSync(RESULTS, markdownReport(report));
    log(`wrote ${RESULTS}`);
  } else {
    log("bench/results.md not written (--no-write, --scale or --only)");
  }
}

let deadline: ReturnType<typeof setTimeout> | undefined;

/** Stops the bench and every child if this step is not done in `ms`. */
function armDeadline(ms: number, step: string): void {
  clearTimeout(deadline);
  deadline = setTimeout(() => {
    console.error(`bench: stopped at its ${ms / 60_000}-minute deadline for ${step}`);
    killAll();
    process.exit(1);
  }, ms);
}

armDeadline(PREPARE_DEADLINE_MS, "making the data and starting the servers");
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

try {
  await main();
  clearTimeout(deadline);
  process.exit(0);
} catch (error) {
  console.error(`bench failed: ${(error as Error).stack ?? error}`);
  killAll();
  process.exit(1);
}
