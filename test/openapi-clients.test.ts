import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KEYS, startTestServer, type TestServer, testStore } from "./helpers";
import {
  codeOf,
  compileStrict,
  documentedOperations,
  generatedOperations,
  redoclyProblems,
  runProgram,
  spectralProblems,
  TOOL_TIMEOUT,
  toolWorkDir,
} from "./openapi-tools";

/**
 * The document as API users consume it (issue 16): the served document is linted by
 * Spectral and Redocly, typed by openapi-typescript, and a client written the natural way
 * (test/clients/natural.ts) must compile under `tsc --strict` and run against the server.
 */

const NATURAL = join(import.meta.dir, "clients", "natural.ts");

type Json = Record<string, any>;

/** The operations of the contract (api-contract.md), and nothing else: no OPTIONS. */
const CONTRACT_OPERATIONS = [
  "GET /healthz getHealthz",
  "GET /api/v1/openapi.json getOpenApi",
  "GET /api/v1/docs getDocs",
  "GET /api/v1/orders getOrders",
  "GET /api/v1/orders/{id} getOrdersById",
  "PATCH /api/v1/orders/{id} patchOrdersById",
  "GET /api/v1/customers getCustomers",
  "POST /api/v1/customers postCustomers",
  "GET /api/v1/customers/{id} getCustomersById",
  "PATCH /api/v1/customers/{id} patchCustomersById",
  "GET /api/v1/products getProducts",
  "POST /api/v1/products postProducts",
  "GET /api/v1/products/{id} getProductsById",
  "PATCH /api/v1/products/{id} patchProductsById",
  "POST /api/v1/products/batch postProductsBatch",
  "GET /api/v1/leads getLeads",
  "GET /api/v1/leads/{id} getLeadsById",
  "PATCH /api/v1/leads/{id} patchLeadsById",
];

const HOUR = 3_600_000;
const BASE = Date.parse("2026-01-10T00:00:00+02:00");
/** Orders 1..5 an hour apart; only order 2 is paid. */
const orders = [1, 2, 3, 4, 5].map((id) => ({
  id,
  number: 7000 + id,
  status: 1,
  paid: id === 2,
  total: 10 * id,
  customer: { name: `Buyer ${id}`, email: `b${id}@example.test` },
  createdAt: new Date(BASE + id * HOUR).toISOString(),
}));
const products = [{ id: 1, name: "Olive oil", sku: "OIL", price: 40, stock: 5 }];

let server: TestServer;
let work: string;
let served: Json;

beforeAll(async () => {
  server = await startTestServer({ stores: [testStore({ orders, products })] });
  work = toolWorkDir("storeapi-openapi-client-");
  const response = await fetch(`${server.url}/api/v1/openapi.json`, {
    headers: { Host: "anything.example" },
  });
  served = (await response.json()) as Json;
  writeFileSync(join(work, "openapi.json"), JSON.stringify(served, null, 2));
});
afterAll(async () => {
  await server?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the served document, as client tools read it", () => {
  test("has exactly the contract's operations", () => {
    expect(documentedOperations(served).sort()).toEqual([...CONTRACT_OPERATIONS].sort());
  });

  test(
    "Spectral (spectral:oas) finds no errors and no warnings but the accepted ones",
    async () => {
      expect(await spectralProblems(work, "openapi.json")).toEqual(["warning info-contact"]);
    },
    TOOL_TIMEOUT,
  );

  test(
    "Redocly (recommended) finds no errors and no warnings but the accepted ones",
    async () => {
      const report = await redoclyProblems(work, "openapi.json");
      expect(report.problems).toEqual(["warn info-license"]);
      expect(report.errors).toBe(0);
    },
    TOOL_TIMEOUT,
  );
});

describe("parameters declared as integers and booleans", () => {
  test("are still parsed strictly from their text", async () => {
    for (const query of [
      "limit=1.0",
      "limit=+5",
      "limit=1e1",
      "paid=1",
      "paid=TRUE",
      "status=01",
      "status=1.5",
    ]) {
      const answer = await server.request(`/api/v1/orders?${query}`, { key: KEYS.read });
      expect([answer.status, answer.json.error.code, answer.json.error.field], query).toEqual([
        400,
        "invalid_parameter",
        query.split("=")[0],
      ]);
    }
    const answer = await server.request("/api/v1/orders/1.0", { key: KEYS.read });
    expect([answer.status, answer.json.error.code]).toEqual([400, "invalid_parameter"]);
  });
});

describe("a client written the natural way", () => {
  test(
    "openapi-typescript types it with exactly the contract's operations, and it compiles under tsc --strict",
    async () => {
      const operations = await generatedOperations(work, "openapi.json");
      expect(operations.sort()).toEqual(CONTRACT_OPERATIONS.map((o) => o.split(" ")[2]).sort());

      expect(codeOf(NATURAL)).not.toMatch(/\bas\b|\bany\b|@ts-|!\./); // no casts, no non-null assertions, no escape hatches
      const tsc = await compileStrict(work, NATURAL);
      expect(tsc.output).toBe("");
      expect(tsc.code).toBe(0);
    },
    TOOL_TIMEOUT,
  );

  test(
    "and runs against the real server: pages, one order, a status change, a replayed create, a batch, an error code",
    async () => {
      const client = await runProgram(work, NATURAL, {
        STOREAPI_URL: server.url,
        STOREAPI_HOST: "shop1.test",
        STOREAPI_KEY: KEYS.all,
      });
      expect(client.stderr).toBe("");
      expect(JSON.parse(client.stdout)).toEqual({
        unpaid: [5, 4, 3, 1],
        pages: 2,
        order: { id: 5, number: 7005, paid: false },
        patched: { status: { id: 3, name: "Shipped" }, customerNotified: true },
        created: { status: 201, replayed: null },
        replay: { status: 201, replayed: "true", sameId: true },
        batch: { updated: 1, failed: 1, outcomes: ["updated 1", "failed not_found"] },
        missing: "no order: Order 999999 was not found.",
      });
    },
    TOOL_TIMEOUT,
  );
});
