import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { isStorageFailure } from "./db/driver";
import { FileLocation } from "./db/location";
import type { StorePool } from "./db/pool";
import type { AuthFailures } from "./http/auth-failures";
import { runtime } from "./runtime/runtime";

/** How many stores `storeapi_store_wal_bytes` lists: the largest WAL files. */
const LARGEST_WALS = 10;

export interface MetricsSources {
  pool: StorePool;
  authFailures: AuthFailures;
  now: () => number;
  /** When the served TLS certificate expires (ms), with `serve --tls-cert`. */
  certificateValidTo?: number;
}

interface OpenStoreStats {
  queued: number;
  failed: number;
  oldest: number | null;
  idempotency: number;
}

const STORE_STATS_SQL = `SELECT
  (SELECT count(*) FROM outbox WHERE status = 'queued') AS queued,
  (SELECT count(*) FROM outbox WHERE status = 'failed') AS failed,
  (SELECT min(created_at) FROM outbox WHERE status = 'queued') AS oldest,
  (SELECT count(*) FROM idempotency) AS idempotency`;

/** The route a request matched (`/api/v1/orders/:id`), never the raw path: label values stay few. */
export const routeLabel = (routePath: string) =>
  routePath.includes("*") ? "unmatched" : routePath;

/**
 * Prometheus metrics (prom-client, on a registry of our own). Request counts and latency
 * are recorded as requests finish; the rest is read when scraped: pool and auth counters
 * through their accessors, outbox and idempotency figures from the stores open right now
 * (the active ones; closed stores are not opened for a scrape), WAL sizes from the files.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: "storeapi_http_requests_total",
    help: "HTTP requests answered, by matched route and status.",
    labelNames: ["route", "status"] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: "storeapi_http_request_duration_seconds",
    help: "Time to answer a request, by matched route.",
    labelNames: ["route"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  constructor(private readonly sources: MetricsSources) {
    const { pool, authFailures } = sources;
    this.gauge("storeapi_open_stores", "Store databases open in the pool.", () => pool.openCount);
    this.counter(
      "storeapi_store_pool_misses_total",
      "Store lookups that had to open the database.",
      () => pool.misses,
    );
    this.counter(
      "storeapi_auth_failures_total",
      "Requests with a wrong, expired or deleted key.",
      () => authFailures.failures,
    );
    this.gauge(
      "storeapi_blocked_ips",
      "Client IPs blocked after too many failed keys.",
      () => authFailures.size.blocked,
    );
    const { certificateValidTo } = sources;
    if (certificateValidTo !== undefined)
      this.gauge(
        "storeapi_tls_certificate_expiry_timestamp_seconds",
        "When the served TLS certificate expires (a renewed one takes effect at restart).",
        () => certificateValidTo / 1000,
      );
    this.storeGauges();
    // A libSQL server keeps its WAL to itself.
    const { location } = sources.pool;
    if (location instanceof FileLocation) this.walGauge(location.dataDir);
  }

  /** Records one answered request. */
  observe(routePath: string, status: number, seconds: number): void {
    const route = routeLabel(routePath);
    this.requests.inc({ route, status: String(status) });
    this.latency.observe({ route }, seconds);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** A counter kept elsewhere (a plain number), reported as is. */
  private counter(name: string, help: string, read: () => number): void {
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }

  private storeGauges(): void {
    let pending: Promise<OpenStoreStats> | null = null;
    // One read of the open stores serves the four gauges of a scrape.
    const stats = () =>
      (pending ??= this.openStoreStats().finally(() => setTimeout(() => (pending = null), 0)));
    const gauge = (name: string, help: string, pick: (s: OpenStoreStats) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          this.set(pick(await stats()));
        },
      });
    gauge("storeapi_outbox_queued", "Emails waiting to be sent (open stores).", (s) => s.queued);
    gauge("storeapi_outbox_failed", "Emails that failed for good (open stores).", (s) => s.failed);
    gauge(
      "storeapi_outbox_oldest_queued_age_seconds",
      "Age of the oldest queued email (open stores); 0 when none.",
      (s) => (s.oldest === null ? 0 : Math.max(0, (this.sources.now() - s.oldest) / 1000)),
    );
    gauge(
      "storeapi_idempotency_records",
      "Idempotency records kept (open stores).",
      (s) => s.idempotency,
    );
  }

  private async openStoreStats(): Promise<OpenStoreStats> {
    const total: OpenStoreStats = { queued: 0, failed: 0, oldest: null, idempotency: 0 };
    for (const slug of this.sources.pool.openSlugs()) {
      const lease = this.sources.pool.leaseOpen(slug, { background: true });
      if (!lease) continue;
      try {
        const row = await lease.db.get<OpenStoreStats>(STORE_STATS_SQL);
        if (!row) continue;
        total.queued += row.queued;
        total.failed += row.failed;
        total.idempotency += row.idempotency;
        if (row.oldest !== null) total.oldest = Math.min(total.oldest ?? row.oldest, row.oldest);
      } finally {
        lease.release();
      }
    }
    return total;
  }

  private walGauge(dataDir: string): void {
    const dir = join(dataDir, "stores");
    new Gauge({
      name: "storeapi_store_wal_bytes",
      help: `Size of the write-ahead log of the ${LARGEST_WALS} stores with the largest one.`,
      labelNames: ["store"] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { store, bytes } of await largestWals(dir)) this.set({ store }, bytes);
      },
    });
  }
}

async function largestWals(dir: string): Promise<{ store: string; bytes: number }[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) =>
    name.endsWith(".db-wal"),
  );
  const sizes = await Promise.all(
    names.map(async (name) => ({
      store: name.slice(0, -".db-wal".length),
      bytes: (await stat(join(dir, name)).catch(() => null))?.size ?? 0,
    })),
  );
  return sizes.sort((a, b) => b.bytes - a.bytes).slice(0, LARGEST_WALS);
}

/**
 * The private operations address (`--metrics-listen`): `GET /metrics`, and
 * `GET /tls-allowed?domain=D` for a TLS proxy's on-demand certificates (Caddy's
 * `on_demand_tls { ask … }`): 200 when D is a store's own domain or `{slug}.{platform
 * domain}` of a store, else 404, so nobody makes the proxy ask for certificates for
 * names no store has (each costs a CA's rate limit).
 */
export function serveMetrics(
  metrics: Metrics,
  isStoreHost: (domain: string) => boolean,
  hostname: string,
  port: number,
) {
  return runtime().serve({
    hostname,
    port,
    maxRequestBodySize: 64 * 1024,
    fetch: async (request) => {
      const url = new URL(request.url);
      if (url.pathname !== "/metrics" && url.pathname !== "/tls-allowed")
        return new Response("not found: metrics are at /metrics\n", { status: 404 });
      if (request.method !== "GET" && request.method !== "HEAD")
        return new Response("method not allowed\n", {
          status: 405,
          headers: { Allow: "GET, HEAD" },
        });
      if (url.pathname === "/tls-allowed") return tlsAllowed(url.searchParams, isStoreHost);
      try {
        return new Response(await metrics.text(), {
          headers: { "Content-Type": metrics.contentType },
        });
      } catch (error) {
        // The per-store gauges read the open stores: storage out of reach makes the scrape fail, in one line.
        if (!isStorageFailure(error)) throw error;
        return new Response("metrics unavailable: a store's database cannot be read now\n", {
          status: 503,
        });
      }
    },
  });
}

function tlsAllowed(query: URLSearchParams, isStoreHost: (domain: string) => boolean): Response {
  const domain = query.get("domain");
  if (!domain) return new Response("give ?domain=NAME\n", { status: 400 });
  return isStoreHost(domain)
    ? new Response("a store's address\n")
    : new Response("no store has this address\n", { status: 404 });
}
