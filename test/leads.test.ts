import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { documentedRequests } from "./contract";
import { ALL_READ, KEYS, otherStore, startTestServer, type TestServer, testStore } from "./helpers";

const L = "/api/v1/leads";
const PRODUCTS_ONLY = "svc_sk_testProductsOnly0000000000000000000005";
const LEADS_READ_WRITE_OTHERS = "svc_sk_testLeadsWrite00000000000000000000006";

const leads = [
  {
    id: 1,
    name: "Dana Levi",
    email: "dana@example.com",
    phone: "+972-50-1234567",
    message: "Do you ship to Eilat?",
    source: "contact-page",
    handled: false,
    notes: null,
    createdAt: "2026-02-01T09:00:00+02:00",
  },
  { id: 2, name: "Avi", createdAt: "2026-02-02T09:00:00+02:00" },
  {
    id: 3,
    name: "Noa",
    handled: true,
    notes: "Called back.",
    createdAt: "2026-07-15T18:30:00+03:00",
  },
  { id: 4, name: "Same second as 3", createdAt: "2026-07-15T18:30:00+03:00" },
];

let server: TestServer;
let request: ReturnType<typeof documentedRequests>;
beforeAll(async () => {
  server = await startTestServer({
    stores: [
      testStore({
        leads,
        keys: [
          {
            name: "all",
            secret: KEYS.all,
            permissions: { products: "write", orders: "write", customers: "write", leads: "write" },
          },
          { name: "read", secret: KEYS.read, permissions: ALL_READ },
          { name: "products", secret: PRODUCTS_ONLY, permissions: { products: "write" } },
          { name: "leads", secret: LEADS_READ_WRITE_OTHERS, permissions: { leads: "write" } },
        ],
      }),
      otherStore({ leads: [{ id: 10, name: "Foreign" }] }),
    ],
  });
  request = documentedRequests(server);
});
afterAll(() => server.stop());

const patch = (id: number, body: unknown, key?: string) =>
  request(`${L}/${id}`, { method: "PATCH", body, key });

describe("leads", () => {
  test("a lead has every field, with exact values", async () => {
    const answer = await request(`${L}/1`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      ok: true,
      data: {
        id: 1,
        name: "Dana Levi",
        email: "dana@example.com",
        phone: "+972-50-1234567",
        message: "Do you ship to Eilat?",
        source: "contact-page",
        handled: false,
        notes: null,
        createdAt: "2026-02-01T09:00:00+02:00",
      },
    });
    expect((await request(`${L}/2`)).json.data).toEqual({
      id: 2,
      name: "Avi",
      email: null,
      phone: null,
      message: null,
      source: null,
      handled: false,
      notes: null,
      createdAt: "2026-02-02T09:00:00+02:00",
    });
  });

  test("unknown and foreign ids are 404, a bad id 400", async () => {
    expect((await request(`${L}/99`)).status).toBe(404);
    expect((await request(`${L}/10`)).json.error.code).toBe("not_found");
    expect((await request(`${L}/0`)).json.error.code).toBe("invalid_parameter");
  });

  test("lists newest first by createdAt then id; created_since inclusive; cursor pages", async () => {
    const all = await request(L);
    expect(all.json.data.map((l: { id: number }) => l.id)).toEqual([4, 3, 2, 1]);
    expect(all.json.hasMore).toBe(false);
    expect(all.json.nextCursor).toBeNull();
    const since = await request(`${L}?created_since=2026-02-02T09:00:00%2B02:00`);
    expect(since.json.data.map((l: { id: number }) => l.id)).toEqual([4, 3, 2]);
    const page1 = await request(`${L}?limit=1`);
    expect(page1.json.data[0].id).toBe(4);
    const page2 = await request(`${L}?limit=2&cursor=${page1.json.nextCursor}`);
    // A cursor is bound to its filters, not its limit.
    expect(page2.json.data.map((l: { id: number }) => l.id)).toEqual([3, 2]);
    const foreign = await request(
      `${L}?limit=1&created_since=2026-01-01&cursor=${page1.json.nextCursor}`,
    );
    expect(foreign.json.error).toMatchObject({ code: "invalid_parameter", field: "cursor" });
    expect((await request(`${L}?updated_since=2026-01-01`)).json.error.code).toBe(
      "invalid_parameter",
    );
    expect((await request(`${L}?limit=0`)).json.error.code).toBe("invalid_parameter");
  });

  test("PATCH sets handled and notes; null clears notes; nothing else may change", async () => {
    const handled = await patch(2, { handled: true, notes: "Sent a catalogue." });
    expect(handled.status).toBe(200);
    expect(handled.json.data).toMatchObject({
      id: 2,
      handled: true,
      notes: "Sent a catalogue.",
      createdAt: "2026-02-02T09:00:00+02:00",
    });
    expect((await request(`${L}/2`)).json.data).toEqual(handled.json.data);
    const cleared = await patch(2, { notes: null });
    expect(cleared.json.data).toMatchObject({ handled: true, notes: null });
    expect((await patch(2, { handled: true })).json.data.handled).toBe(true);
    expect((await patch(2, {})).json.error.code).toBe("nothing_to_update");
    for (const field of ["name", "email", "message", "notifyCustomer"]) {
      expect((await patch(2, { [field]: "X" })).json.error).toMatchObject({
        code: "invalid_field",
        field,
      });
    }
    expect((await patch(2, { handled: "yes" })).json.error).toMatchObject({
      code: "invalid_field",
      field: "handled",
    });
    expect((await patch(2, { notes: "n".repeat(5001) })).json.error).toMatchObject({
      code: "invalid_field",
      field: "notes",
    });
    expect((await patch(2, { notes: "n".repeat(5000) })).status).toBe(200);
    expect((await patch(99, { handled: true })).status).toBe(404);
    expect((await patch(10, { handled: true })).status).toBe(404);
  });

  test("scope: reading needs leads:read, PATCH needs leads:write", async () => {
    expect((await request(L, { key: PRODUCTS_ONLY })).json.error.code).toBe("insufficient_scope");
    expect((await request(`${L}/1`, { key: KEYS.read })).status).toBe(200);
    expect((await patch(1, { handled: true }, KEYS.read)).json.error.code).toBe(
      "insufficient_scope",
    );
    expect((await patch(1, { handled: true }, PRODUCTS_ONLY)).status).toBe(403);
    expect((await patch(1, { handled: true }, LEADS_READ_WRITE_OTHERS)).status).toBe(200);
    expect(
      (await request("/api/v1/products", { key: LEADS_READ_WRITE_OTHERS })).json.error.code,
    ).toBe("insufficient_scope");
  });

  test("there is no POST /leads", async () => {
    const answer = await request(L, { method: "POST", body: { name: "X" } });
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("GET, HEAD");
  });
});
