import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import Database from "libsql";
// @ts-expect-error: the parser ships no types
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { storeDbPath } from "../src/db/pool";
import { loadFixture } from "../src/load/load";
import { KEYS, send, tempDir, testStore } from "./helpers";
import { type ServerProcess, spawnServer } from "./process";
import { TEST_LIBSQL } from "./sqld";

interface Family {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}

const dataDir = tempDir("storeapi-metrics-");
let server: ServerProcess;
let metricsUrl: string;
// Seeds outbox rows by writing the store file directly, and reads WAL files: files only.
beforeAll(async () => {
  if (TEST_LIBSQL) return;
  await loadFixture(dataDir, { stores: [testStore()] });
  const db = new Database(storeDbPath(dataDir, "shop1"));
  const mail = db.prepare(
    "INSERT INTO outbox (kind, recipient, subject, text, html, status, attempts, next_attempt_at, created_at) VALUES ('order_status', 'c@x.test', 's', '', '', ?, 0, ?, ?)",
  );
  // Queued an hour ago, next attempt far ahead (the worker leaves it); one failed for good.
  mail.run("queued", Date.now() + 3_600_000, Date.now() - 3_600_000);
  mail.run("failed", 0, Date.now());
  db.close();
  server = await spawnServer(dataDir, [
    "--metrics-listen",
    "127.0.0.1:0",
    "--auth-failure-limit",
    "2",
  ]);
  const listening =
    server
      .stdout()
      .split("\n")
      .find((line) => line.includes('"listening"')) ?? "{}";
  metricsUrl = JSON.parse(listening).metricsUrl;
}, 120_000);
afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dataDir, { recursive: true, force: true });
}, 120_000);

async function scrape(): Promise<{ families: Map<string, Family>; text: string }> {
  const response = await fetch(metricsUrl);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
  const text = await response.text();
  const families = parsePrometheusTextFormat(text) as Family[];
  return { families: new Map(families.map((family) => [family.name, family])), text };
}

const sampleValue = (
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
) =>
  Number(
    families
      .get(name)
      ?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.value,
  );

test.skipIf(TEST_LIBSQL)(
  "metrics are served at /metrics on their own address only",
  async () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(metricsUrl).not.toStartWith(`${server.url}/`);
    expect((await send(server.url, "/metrics", { key: null })).status).toBe(404);
    expect((await fetch(metricsUrl.replace("/metrics", "/api/v1/products"))).status).toBe(404);
  },
  120_000,
);

test.skipIf(TEST_LIBSQL)(
  "/tls-allowed on the same address says which names a TLS proxy may get certificates for",
  async () => {
    const ask = async (query: string) => {
      const answer = await fetch(metricsUrl.replace("/metrics", `/tls-allowed${query}`));
      return [answer.status, await answer.text()];
    };
    expect(await ask("?domain=shop1.test")).toEqual([200, "a store's address\n"]);
    expect(await ask("?domain=SHOP1.localhost")).toEqual([200, "a store's address\n"]);
    expect(await ask("?domain=nobody.localhost")).toEqual([404, "no store has this address\n"]);
    expect(await ask("?domain=localhost")).toEqual([404, "no store has this address\n"]);
    expect(await ask("")).toEqual([400, "give ?domain=NAME\n"]);
    expect((await send(server.url, "/tls-allowed?domain=shop1.test", { key: null })).status).toBe(
      404,
    );
  },
  120_000,
);

test.skipIf(TEST_LIBSQL)(
  "a scrape parses and reports requests, latency, pool, outbox, idempotency, WAL and auth failures",
  async () => {
    for (let i = 0; i < 3; i++)
      expect((await send(server.url, "/api/v1/products/1", { key: KEYS.read })).status).toBe(404);
    expect(
      (
        await send(server.url, "/api/v1/products", {
          method: "POST",
          body: { name: "A", price: 1 },
          headers: { "Idempotency-Key": "m-1" },
        })
      ).status,
    ).toBe(201);
    const wrong = "svc_sk_metricsWrongKey0000000000000000000000";
    for (let i = 0; i < 2; i++)
      expect((await send(server.url, "/api/v1/orders", { key: wrong })).status).toBe(401);
    const { families, text } = await scrape();

    expect(
      sampleValue(families, "storeapi_http_requests_total", {
        route: "/api/v1/products/:id",
        status: "404",
      }),
    ).toBe(3);
    expect(
      sampleValue(families, "storeapi_http_requests_total", {
        route: "/api/v1/products",
        status: "201",
      }),
    ).toBe(1);
    expect(
      sampleValue(families, "storeapi_http_requests_total", {
        route: "/api/v1/orders",
        status: "401",
      }),
    ).toBe(2);
    const latency = families.get("storeapi_http_request_duration_seconds");
    expect(latency?.type).toBe("HISTOGRAM");
    // The parser folds a histogram's labelled series into one: read the count line itself.
    expect(text).toContain(
      'storeapi_http_request_duration_seconds_count{route="/api/v1/products/:id"} 3\n',
    );

    expect(sampleValue(families, "storeapi_open_stores")).toBe(1);
    expect(sampleValue(families, "storeapi_store_pool_misses_total")).toBe(1);
    expect(sampleValue(families, "storeapi_outbox_queued")).toBe(1);
    expect(sampleValue(families, "storeapi_outbox_failed")).toBe(1);
    expect(
      sampleValue(families, "storeapi_outbox_oldest_queued_age_seconds"),
    ).toBeGreaterThanOrEqual(3600);
    expect(sampleValue(families, "storeapi_idempotency_records")).toBe(1);
    expect(families.get("storeapi_store_wal_bytes")?.metrics.map((m) => m.labels?.store)).toEqual([
      "shop1",
    ]);
    expect(sampleValue(families, "storeapi_auth_failures_total")).toBe(2);
    expect(sampleValue(families, "storeapi_blocked_ips")).toBe(1);
  },
  120_000,
);
