import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { apiRoutes } from "../../src/routes";
import { KEYS, otherStore, startTestServer, type TestServer, testStore } from "../helpers";

/**
 * Nothing of one store is visible through another: for every endpoint, store B's key
 * on store A's host is 401 and store B's ids on store A are 404.
 */

const B_ID = 900;
const at = "2026-03-01T10:00:00+02:00";
const records = (id: number, tag: string) => ({
  customers: [
    {
      id,
      email: `${tag}@example.test`,
      firstName: tag,
      lastName: "Isolated",
      status: "active",
      createdAt: at,
    },
  ],
  products: [
    {
      id,
      name: `${tag} product`,
      price: 10,
      sku: `SKU-${tag}`,
      internalSku: `INT-${tag}`,
      createdAt: at,
      updatedAt: at,
    },
  ],
  orders: [
    {
      id,
      number: id,
      status: 1,
      total: 10,
      customer: { id: null, name: tag, email: `${tag}@example.test`, phone: "", address: "" },
      createdAt: at,
    },
  ],
  leads: [{ id, name: `${tag} lead`, email: `${tag}-lead@example.test`, createdAt: at }],
});

/** A body each PATCH route accepts, so the only thing wrong is the id. */
const VALID_PATCH: Record<string, unknown> = {
  "/orders/:id": { adminNotes: "isolation" },
  "/customers/:id": { notes: "isolation" },
  "/products/:id": { name: "isolation" },
  "/leads/:id": { handled: true },
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    stores: [testStore(records(1, "a")), otherStore(records(B_ID, "b"))],
    flags: { "rate-limit": "100000", "auth-failure-limit": "100000" },
  });
});
afterAll(() => server.stop());

const pathOf = (path: string, id: number) => `/api/v1${path.replace(":id", String(id))}`;

describe("store isolation", () => {
  test("store B's key is 401 on store A for every endpoint", async () => {
    for (const route of apiRoutes) {
      const answer = await server.request(pathOf(route.path, 1), {
        method: route.method,
        key: KEYS.other,
        body: route.method === "GET" ? undefined : {},
      });
      expect(answer.status, `${route.method} ${route.path}`).toBe(401);
      expect(answer.json.error.code).toBe("unauthorized");
    }
  });

  test("store B's ids are 404 on store A for every endpoint with an id", async () => {
    for (const route of apiRoutes.filter((r) => r.path.includes(":id"))) {
      const body = route.method === "GET" ? undefined : VALID_PATCH[route.path];
      const answer = await server.request(pathOf(route.path, B_ID), { method: route.method, body });
      expect(answer.status, `${route.method} ${route.path}`).toBe(404);
      expect(answer.json.error.code).toBe("not_found");
      const own = await server.request(pathOf(route.path, B_ID), {
        method: route.method,
        body,
        host: "shop2.test",
        key: KEYS.other,
      });
      expect(own.status, `${route.method} ${route.path} on its own store`).toBe(200);
    }
  });

  test("lists on store A never show store B's rows", async () => {
    for (const route of apiRoutes.filter((r) => r.method === "GET" && !r.path.includes(":id"))) {
      const answer = await server.request(`/api/v1${route.path}?limit=100`);
      expect(answer.status, route.path).toBe(200);
      expect(
        answer.json.data.map((row: { id: number }) => row.id),
        route.path,
      ).toEqual([1]);
    }
  });

  test("a batch on store A cannot reach store B's products by id, sku or internalSku", async () => {
    if (!apiRoutes.some((r) => r.path === "/products/batch")) return;
    const before = await server.request(`/api/v1/products/${B_ID}`, {
      host: "shop2.test",
      key: KEYS.other,
    });
    const answer = await server.request("/api/v1/products/batch", {
      method: "POST",
      body: {
        items: [
          { id: B_ID, name: "x" },
          { sku: "SKU-b", name: "x" },
          { internalSku: "INT-b", name: "x" },
        ],
      },
    });
    expect(answer.status).toBe(200);
    expect(answer.json.data.updated).toBe(0);
    expect(
      answer.json.data.results.map((r: { error?: { code: string } }) => r.error?.code),
    ).toEqual(["not_found", "not_found", "not_found"]);
    const untouched = await server.request(`/api/v1/products/${B_ID}`, {
      host: "shop2.test",
      key: KEYS.other,
    });
    expect(untouched.json.data).toEqual(before.json.data);
  });
});
