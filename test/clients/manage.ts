/**
 * A host's platform written the way API users write one: openapi-fetch over the types
 * openapi-typescript generates from the management API's served document (`./api`,
 * written next to this file by test/manage-openapi.test.ts). It must compile under
 * `tsc --strict` as is: no casts, no `any`. It creates a store, gives it a key, posts an
 * order from checkout and rolls the key, and prints what it saw as one JSON line.
 */
import createClient from "openapi-fetch";
import type { paths } from "./api";

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const baseUrl = env("STOREAPI_URL");
const client = createClient<paths>({
  baseUrl,
  headers: { Authorization: `Bearer ${env("STOREAPI_HOST_KEY")}` },
});

// Signup: a new store, safe to retry with the same Idempotency-Key.
const signup = () =>
  client.POST("/manage/v1/stores", {
    params: { header: { "Idempotency-Key": "signup-natural" } },
    body: {
      slug: "natural",
      name: "Natural Goods",
      domain: "natural.example.com",
      plan: "growth",
      ownerEmail: "owner@natural.example.com",
    },
  });
const created = await signup();
if (!created.data) throw new Error(`create store failed: ${created.response.status}`);
const store = created.data.data;
const retried = await signup();

// The store admin's first key.
const slug = { slug: store.slug };
const made = await client.POST("/manage/v1/stores/{slug}/keys", {
  params: { path: slug },
  body: { name: "ERP", permissions: { orders: "read" } },
});
if (!made.data) throw new Error(`create key failed: ${made.response.status}`);
const key = made.data.data;
const secret = key.key ?? "";

// Checkout posts an order; a second with the same number is an error the platform branches on.
const order = await client.POST("/manage/v1/stores/{slug}/orders", {
  params: { path: slug },
  body: {
    number: 1001,
    status: 1,
    total: 99.9,
    customer: { name: "Dana", email: "dana@example.com" },
  },
});
if (!order.data) throw new Error(`post order failed: ${order.response.status}`);
const again = await client.POST("/manage/v1/stores/{slug}/orders", {
  params: { path: slug },
  body: { number: 1001, status: 1, total: 5 },
});
const duplicate =
  again.error?.error.code === "number_taken"
    ? "number_taken"
    : `unexpected ${again.response.status}`;

// Roll the key with an hour's grace: both keys work until then.
const rolled = await client.POST("/manage/v1/stores/{slug}/keys/{id}/roll", {
  params: { path: { slug: store.slug, id: key.id } },
  body: { grace: "1h" },
});
if (!rolled.data) throw new Error(`roll failed: ${rolled.response.status}`);
const listed = await client.GET("/manage/v1/stores/{slug}/keys", { params: { path: slug } });
const ordersWith = async (storeKey: string) =>
  (
    await fetch(`${baseUrl}/api/v1/orders`, {
      headers: { Host: store.domain, Authorization: `Bearer ${storeKey}` },
    })
  ).status;

console.log(
  JSON.stringify({
    store: {
      slug: store.slug,
      statuses: store.orderStatuses.length,
      replayed: retried.response.headers.get("Idempotent-Replayed"),
    },
    key: { name: key.name, shown: secret.startsWith("svc_sk_"), permissions: key.permissions },
    order: { number: order.data.data.number, total: order.data.data.total },
    duplicate,
    rolled: {
      name: rolled.data.data.name,
      shown: rolled.data.data.key.startsWith("svc_sk_"),
      listed: listed.data?.data.length ?? 0,
    },
    storeApi: { old: await ordersWith(secret), new: await ordersWith(rolled.data.data.key) },
  }),
);
