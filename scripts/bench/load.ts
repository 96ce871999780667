/**
 * Drives one load test against a URL: wrk (with scripts/bench/wrk.lua) when installed,
 * else autocannon in a child process (scripts/bench/autocannon.ts). Both are pinned to
 * the load generator's core when one is given, and report the same numbers.
 */
import { join } from "node:path";

export type RequestKind = "fixed" | "patch_order" | "create_customer" | "product_batch";

export interface LoadSpec {
  baseUrl: string;
  method: "GET" | "PATCH" | "POST";
  /** May contain `{id}`: a random id in 1..maxId per request. */
  path: string;
  kind: RequestKind;
  maxId: number;
  host?: string;
  key?: string;
  batch?: number;
  /** Spread requests over small stores from..count (from 1 unless given): their Host and key per request. */
  stores?: { count: number; spread: "uniform" | "zipf"; from?: number };
  nonce: string;
}

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Non-2xx answers, socket errors and timeouts. */
  errors: number;
}

export type Tool = "wrk" | "autocannon";

const HERE = import.meta.dir;

export function chooseTool(): Tool {
  return Bun.which("wrk") ? "wrk" : "autocannon";
}

export const WRK_INSTALL_HINT =
  "wrk is not installed; using autocannon (slower, a weaker load generator). Install wrk with: sudo apt-get update && sudo apt-get install -y wrk";

const pinned = (cpu: string | null, command: string[]) =>
  cpu === null ? command : ["taskset", "-c", cpu, ...command];

function specEnv(spec: LoadSpec): Record<string, string> {
  const env: Record<string, string> = {
    BENCH_METHOD: spec.method,
    BENCH_PATH: spec.path,
    BENCH_KIND: spec.kind,
    BENCH_MAX_ID: String(spec.maxId),
    BENCH_BATCH: String(spec.batch ?? 500),
    BENCH_NONCE: spec.nonce,
  };
  if (spec.host) env.BENCH_HOST = spec.host;
  if (spec.key) env.BENCH_KEY = spec.key;
  if (spec.stores) {
    env.BENCH_STORES = String(spec.stores.count);
    env.BENCH_SPREAD = spec.stores.spread;
    env.BENCH_STORES_FROM = String(spec.stores.from ?? 1);
  }
  return env;
}

export async function runLoad(
  tool: Tool,
  spec: LoadSpec,
  options: { seconds: number; connections: number; cpu: string | null },
): Promise<LoadResult> {
  const command =
    tool === "wrk"
      ? [
          "wrk",
          "-t1",
          `-c${options.connections}`,
          `-d${Math.max(1, Math.round(options.seconds))}s`,
          "--timeout",
          "10s",
          "-s",
          join(HERE, "wrk.lua"),
          spec.baseUrl,
        ]
      : [
          process.execPath,
          join(HERE, "autocannon.ts"),
          String(options.connections),
          String(options.seconds),
          spec.baseUrl,
        ];
  const child = Bun.spawn(pinned(options.cpu, command), {
    env: { ...process.env, ...specEnv(spec) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  await child.exited;
  const line = out.split("\n").find((l) => l.startsWith("BENCH_RESULT "));
  if (!line)
    throw new Error(
      `${tool} gave no result (exit ${child.exitCode}): ${(err || out).slice(0, 500)}`,
    );
  const r = JSON.parse(line.slice("BENCH_RESULT ".length));
  const seconds = r.durationUs / 1e6;
  return {
    rps: r.requests / seconds,
    p50Ms: r.p50Us / 1000,
    p99Ms: r.p99Us / 1000,
    requests: r.requests,
    errors: r.connectErrors + r.readErrors + r.writeErrors + r.statusErrors + r.timeouts,
  };
}
