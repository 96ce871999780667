/**
 * The requests of each load kind, in JavaScript: the autocannon fallback sends them, and
 * the bench's preflight sends one of each to check a scenario answers 2xx before it is
 * measured. wrk.lua makes the same requests in Lua.
 */
import { smallDomain, smallKey } from "./generate";
import type { LoadSpec } from "./load";

export interface BenchRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const randomId = (maxId: number) => 1 + Math.floor(Math.random() * maxId);

const zipfTables = new Map<number, Float64Array>();

/** Cumulative Zipf (s = 1) weights over 1..count, built once per count. */
function zipfTable(count: number): Float64Array {
  let table = zipfTables.get(count);
  if (table) return table;
  table = new Float64Array(count);
  let total = 0;
  for (let n = 1; n <= count; n++) table[n - 1] = total += 1 / n;
  for (let i = 0; i < count; i++) table[i] /= total;
  zipfTables.set(count, table);
  return table;
}

/** A small store number in from..count, uniform or Zipf-skewed over 1..count (store 1 the hottest). */
function pickStore({ count, spread, from = 1 }: NonNullable<LoadSpec["stores"]>): number {
  if (spread === "uniform") return from - 1 + randomId(count - from + 1);
  const table = zipfTable(count);
  const u = Math.random();
  let [lo, hi] = [0, count - 1];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (table[mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1;
}

/** The `counter`-th request of a spec (counter from 1), with `unique` making creates distinct. */
export function makeRequest(spec: LoadSpec, counter: number, unique: string): BenchRequest {
  const headers: Record<string, string> = {};
  if (spec.host) headers.host = spec.host;
  if (spec.key) headers.authorization = `Bearer ${spec.key}`;
  if (spec.stores) {
    const n = pickStore(spec.stores);
    headers.host = smallDomain(n);
    headers.authorization = `Bearer ${smallKey(n)}`;
  }
  if (spec.method !== "GET") headers["content-type"] = "application/json";
  let body: string | undefined;
  if (spec.kind === "patch_order") body = JSON.stringify({ status: counter % 2 === 0 ? 3 : 7 });
  if (spec.kind === "create_customer") {
    headers["idempotency-key"] = `bench-${unique}`;
    body = JSON.stringify({
      email: `bench-${unique}@bench.test`,
      firstName: "Bench",
      lastName: "Customer",
    });
  }
  if (spec.kind === "product_batch") {
    const items = Array.from({ length: spec.batch ?? 500 }, () => ({
      id: randomId(spec.maxId),
      stock: counter % 1000,
    }));
    body = JSON.stringify({ items });
  }
  return {
    method: spec.method,
    path: spec.path.replaceAll("{id}", String(randomId(spec.maxId))),
    headers,
    body,
  };
}

/** Sends one request with fetch; the Host header is honoured (Bun's fetch sends it as given). */
export async function sendOnce(spec: LoadSpec, counter: number, unique: string) {
  const request = makeRequest(spec, counter, unique);
  const response = await fetch(`${spec.baseUrl}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  return { status: response.status, text: await response.text() };
}
