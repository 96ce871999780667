/**
 * Fallback load generator when wrk is missing: same environment variables as wrk.lua,
 * same `BENCH_RESULT {...}` line.   bun scripts/bench/autocannon.ts CONNECTIONS SECONDS URL
 */
import autocannon from "autocannon";
import type { LoadSpec, RequestKind } from "./load";
import { makeRequest } from "./requests";

const [connections, seconds, url] = process.argv.slice(2);
const env = process.env;
const spec: LoadSpec = {
  baseUrl: url,
  method: (env.BENCH_METHOD ?? "GET") as LoadSpec["method"],
  path: env.BENCH_PATH ?? "/",
  kind: (env.BENCH_KIND ?? "fixed") as RequestKind,
  maxId: Number(env.BENCH_MAX_ID ?? 1),
  batch: Number(env.BENCH_BATCH ?? 500),
  host: env.BENCH_HOST,
  key: env.BENCH_KEY,
  nonce: env.BENCH_NONCE ?? "0",
  stores: env.BENCH_STORES
    ? {
        count: Number(env.BENCH_STORES),
        spread: env.BENCH_SPREAD === "zipf" ? "zipf" : "uniform",
        from: Number(env.BENCH_STORES_FROM ?? 1),
      }
    : undefined,
};
let counter = 0;

const result = await autocannon({
  url,
  connections: Number(connections),
  duration: Number(seconds),
  requests: [
    {
      setupRequest: (request: Record<string, unknown>) => {
        counter++;
        return { ...request, ...makeRequest(spec, counter, `${spec.nonce}-ac-${counter}`) };
      },
    },
  ],
});
const line = {
  requests: result.requests.total,
  durationUs: Math.round(result.duration * 1e6),
  p50Us: Math.round(result.latency.p50 * 1000),
  p90Us: Math.round(result.latency.p90 * 1000),
  p99Us: Math.round(result.latency.p99 * 1000),
  maxUs: Math.round(result.latency.max * 1000),
  connectErrors: result.errors,
  readErrors: 0,
  writeErrors: 0,
  statusErrors: result.non2xx,
  timeouts: result.timeouts,
};
console.log(`BENCH_RESULT ${JSON.stringify(line)}`);
