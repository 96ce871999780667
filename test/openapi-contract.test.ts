import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openApiDocument } from "../src/openapi";
import { apiRoutes } from "../src/routes";
import { documentedRequests } from "./contract";
import {
  type ApiAnswer,
  errorCode,
  KEYS,
  type RequestOptions,
  startTestServer,
  type TestServer,
  testStore,
} from "./helpers";

/** Black-box: answers of the real server, each checked against the published document. */

let server: TestServer;
let request: (path: string, options?: RequestOptions) => Promise<ApiAnswer>;

beforeAll(async () => {
  server = await startTestServer({
    stores: [testStore(), testStore({ slug: "poor", domain: "poor.test", plan: "starter" })],
    flags: { "rate-limit": "100000" },
  });
  request = documentedRequests(server);
});
afterAll(() => server.stop());

const API = "/api/v1";
/** A concrete path for a route: `:id` and friends become `id`. */
const concrete = (path: string, id: string) => API + path.replace(/:[A-Za-z0-9_]+/g, id);
/** An empty JSON object body where the method takes one. */
const emptyBody = (method: string) => (method === "GET" ? undefined : {});

describe("answers match the OpenAPI document", () => {
  test("service paths: health, the document itself and the reference page, on any host without a key", async () => {
    expect((await request("/healthz", { host: "nowhere.example", key: null })).status).toBe(200);
    const document = await request(`${API}/openapi.json`, { host: "nowhere.example", key: null });
    expect(document.status).toBe(200);
    expect(document.json).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    const docs = await request(`${API}/docs`, { key: null });
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toStartWith("text/html");
    expect(docs.text).toContain('<script type="application/json" id="openapi">');
    // Try it's store host is prefilled only where the page's own host is a store's.
    expect(docs.text).toContain('<body data-store-host="yes">');
    const elsewhere = await request(`${API}/docs`, { host: "127.0.0.1:8080", key: null });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.text).toContain('<body data-store-host="no">');
  });

  test("key in the URL, OPTIONS and unknown paths", async () => {
    expect(errorCode(await request("/healthz?apikey=x", { key: null }))).toBe("key_in_url");
    const options = await request(`${API}/openapi.json`, { method: "OPTIONS", key: null });
    expect(options.status).toBe(405);
    expect(options.headers.get("allow")).toBe("GET, HEAD");
    expect((await request(`${API}/nothing-here`)).status).toBe(404);
    expect((await request("/api/v2/orders", { key: null })).status).toBe(404);
  });

  test("every route: no key, no permission, plan without the API", async () => {
    for (const route of apiRoutes) {
      const path = concrete(route.path, "1");
      const { method } = route;
      const body = emptyBody(method);
      expect(errorCode(await request(path, { method, key: null, body }))).toBe("unauthorized");
      expect(errorCode(await request(path, { method, key: KEYS.none, body }))).toBe(
        "insufficient_scope",
      );
      expect(errorCode(await request(path, { method, host: "poor.test", body }))).toBe(
        "plan_required",
      );
    }
  });

  test("every route: bad parameters, rows that do not exist, bodies that are not JSON", async () => {
    for (const route of apiRoutes) {
      const method = route.method;
      const body = emptyBody(method);
      if (route.path.includes(":")) {
        expect(errorCode(await request(concrete(route.path, "abc"), { method, body }))).toBe(
          "invalid_parameter",
        );
      }
      expect(
        errorCode(await request(`${concrete(route.path, "1")}?nope=1`, { method, body })),
      ).toBe("invalid_parameter");
      if (method === "GET" && route.path.includes(":")) {
        expect(errorCode(await request(concrete(route.path, "999999"), { key: KEYS.read }))).toBe(
          "not_found",
        );
      }
      if (method !== "GET") {
        const path = concrete(route.path, "999999");
        const plain = { "Content-Type": "text/plain" };
        expect(errorCode(await request(path, { method, raw: "{}", headers: plain }))).toBe(
          "json_required",
        );
        const json = { "Content-Type": "application/json" };
        expect(errorCode(await request(path, { method, raw: "{", headers: json }))).toBe(
          "invalid_json",
        );
        expect(errorCode(await request(path, { method, body: { notAField: 1 } }))).toBe(
          "invalid_field",
        );
      }
    }
  });

  test("every list: a first page, and a limit out of range", async () => {
    for (const route of apiRoutes.filter((r) => r.method === "GET" && r.list)) {
      const page = await request(concrete(route.path, "1"), { key: KEYS.read });
      expect(page.status).toBe(200);
      expect(
        errorCode(await request(`${concrete(route.path, "1")}?limit=0`, { key: KEYS.read })),
      ).toBe("invalid_parameter");
    }
  });
});

describe("answers with data match the OpenAPI document", () => {
  const hasRoute = (method: string, path: string) =>
    apiRoutes.some((r) => r.method === method && r.path === path);

  test.if(hasRoute("POST", "/customers"))(
    "a customer created, replayed, read and listed",
    async () => {
      const headers = { "Idempotency-Key": "contract-1" };
      const body = { email: "contract@example.com", firstName: "Dana", phone: null };
      const created = await request(`${API}/customers`, { method: "POST", body, headers });
      expect(created.status).toBe(201);
      const replay = await request(`${API}/customers`, { method: "POST", body, headers });
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.text).toBe(created.text);
      const id = (created.json as { data: { id: number } }).data.id;
      expect((await request(`${API}/customers/${id}`, { key: KEYS.read })).status).toBe(200);
      expect((await request(`${API}/customers?limit=1`, { key: KEYS.read })).status).toBe(200);
      const taken = await request(`${API}/customers`, {
        method: "POST",
        body: { email: "CONTRACT@example.com" },
      });
      expect(errorCode(taken)).toBe("email_taken");
    },
  );
});
