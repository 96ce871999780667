/**
 * A client written the way API users write one: openapi-fetch over the types
 * openapi-typescript generates from the served document (`./api`, written next to this
 * file by test/openapi-clients.test.ts). It must compile under `tsc --strict` as is: no
 * casts, no `any`. It prints what it saw as one JSON line for the test to compare.
 */
import createClient from "openapi-fetch";
import type { paths } from "./api";

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const client = createClient<paths>({
  baseUrl: env("STOREAPI_URL"),
  headers: { Host: env("STOREAPI_HOST"), Authorization: `Bearer ${env("STOREAPI_KEY")}` },
});

// Every unpaid order, page by page, to the end.
const unpaid: number[] = [];
let cursor: string | undefined;
let pages = 0;
do {
  const res = await client.GET("/api/v1/orders", {
    params: { query: { limit: 2, paid: false, cursor } },
  });
  if (!res.data) throw new Error(`list failed: ${res.response.status}`);
  unpaid.push(...res.data.data.map((order) => order.id));
  cursor = res.data.nextCursor ?? undefined;
  pages++;
} while (cursor && pages < 50);

// One order, then a status change that emails the customer.
const first = unpaid[0];
const one = await client.GET("/api/v1/orders/{id}", { params: { path: { id: first } } });
if (!one.data) throw new Error("get failed");
const patched = await client.PATCH("/api/v1/orders/{id}", {
  params: { path: { id: first } },
  body: { status: 3, notifyCustomer: true },
});
if (!patched.data) throw new Error("patch failed");

// The same create twice with one Idempotency-Key: the second is the first's answer, replayed.
const create = () =>
  client.POST("/api/v1/customers", {
    params: { header: { "Idempotency-Key": "natural-client-1" } },
    body: { email: "natural@example.com", firstName: "Noa" },
  });
const created = await create();
const replayed = await create();
if (!created.data || !replayed.data) throw new Error("create failed");

// A batch: each item succeeds or fails on its own.
const batch = await client.POST("/api/v1/products/batch", {
  body: {
    items: [
      { id: 1, price: 41.5, stock: 4 },
      { sku: "NOPE", visible: false },
    ],
  },
});
if (!batch.data) throw new Error("batch failed");
const outcomes = batch.data.data.results.map((result) =>
  result.ok ? `updated ${result.id}` : `failed ${result.error.code}`,
);

// An error, told apart by its code.
let missing = "";
const absent = await client.GET("/api/v1/orders/{id}", { params: { path: { id: 999_999 } } });
if (absent.error) {
  switch (absent.error.error.code) {
    case "not_found":
      missing = `no order: ${absent.error.error.message}`;
      break;
    default:
      missing = `other: ${absent.error.error.code}`;
  }
}

console.log(
  JSON.stringify({
    unpaid,
    pages,
    order: { id: one.data.data.id, number: one.data.data.number, paid: one.data.data.paid },
    patched: {
      status: patched.data.data.status,
      customerNotified: patched.data.data.customerNotified,
    },
    created: {
      status: created.response.status,
      replayed: created.response.headers.get("Idempotent-Replayed"),
    },
    replay: {
      status: replayed.response.status,
      replayed: replayed.response.headers.get("Idempotent-Replayed"),
      sameId: replayed.data.data.id === created.data.data.id,
    },
    batch: { updated: batch.data.data.updated, failed: batch.data.data.failed, outcomes },
    missing,
  }),
);
