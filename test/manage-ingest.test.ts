import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { tempDir } from "./helpers";
import { dataDirIn, manage, newHostKey, storeBody } from "./manage-support";
import { type ServerProcess, spawnServer } from "./process";

// Each test starts CLI processes or waits for a reload: on a loaded machine that takes seconds.
setDefaultTimeout(60_000);

let dir: string;
let server: ServerProcess;
let hostKey: string;
let storeKey: string;

beforeAll(async () => {
  dir = tempDir("storeapi-manage-ingest-");
  hostKey = await newHostKey(dataDirIn(dir));
  server = await spawnServer(dataDirIn(dir));
  await manage(server.url, "POST", "/stores", {
    key: hostKey,
    body: storeBody("shop", { settings: { manualCustomerApproval: true } }),
  });
  const key = await manage(server.url, "POST", "/stores/shop/keys", {
    key: hostKey,
    body: { name: "all", permissions: { orders: "write", leads: "write", customers: "write" } },
  });
  storeKey = key.json.data.key;
});

afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown) =>
  manage(server.url, method, path, { key: hostKey, body });
const storeApi = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: {
      Host: "shop.example.com",
      Authorization: `Bearer ${storeKey}`,
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as any };
};

describe("POST /manage/v1/stores/{slug}/orders", () => {
  test("checkout posts an order with the loader's defaults; the store's key lists it", async () => {
    const created = await call("POST", "/stores/shop/orders", {
      number: 1001,
      status: 2,
      total: 99.9,
      customer: { name: "Dana", email: "dana@example.com" },
      items: [{ name: "Mug", productId: 5, quantity: 2, price: 49.95 }],
    });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({
      id: 1,
      number: 1001,
      total: 99.9,
      paid: false,
      payType: "other",
    });
    expect(created.json.data.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const listed = await storeApi("GET", "/orders");
    expect(listed.json.data.map((o: { number: number }) => o.number)).toEqual([1001]);
    expect((await storeApi("GET", "/orders/1")).json.data).toEqual(created.json.data);
  });

  test("unknown status: invalid_field with validIds; repeated number: number_taken; id: not allowed", async () => {
    const badStatus = await call("POST", "/stores/shop/orders", {
      number: 2000,
      status: 42,
      total: 1,
    });
    expect(badStatus.status).toBe(400);
    expect(badStatus.json.error).toMatchObject({
      code: "invalid_field",
      field: "status",
      validIds: [1, 2, 3, 4, 5, 6],
    });
    await call("POST", "/stores/shop/orders", { number: 2001, status: 1, total: 1 });
    const taken = await call("POST", "/stores/shop/orders", { number: 2001, status: 1, total: 1 });
    expect(taken.status).toBe(409);
    expect(taken.json.error.code).toBe("number_taken");
    expect(
      (await call("POST", "/stores/shop/orders", { id: 9, number: 2002, status: 1, total: 1 })).json
        .error,
    ).toMatchObject({
      code: "invalid_field",
      field: "id",
    });
    expect(
      (await call("POST", "/stores/shop/orders", { number: 2003, status: 1 })).json.error,
    ).toMatchObject({ code: "invalid_field", field: "total" });
    expect(
      (
        await call("POST", "/stores/shop/orders", {
          number: 2004,
          status: 1,
          total: 1,
          updatedAt: "2000-01-01",
        })
      ).json.error,
    ).toMatchObject({
      code: "invalid_field",
      field: "updatedAt",
    });
    expect(
      (await call("POST", "/stores/none/orders", { number: 1, status: 1, total: 1 })).status,
    ).toBe(404);
  });
});

describe("POST /manage/v1/stores/{slug}/leads", () => {
  test("a storefront form's lead; name required, no id", async () => {
    const created = await call("POST", "/stores/shop/leads", {
      name: "Noa",
      email: "noa@example.com",
      message: "Call me",
    });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({
      name: "Noa",
      email: "noa@example.com",
      message: "Call me",
      handled: false,
    });
    expect((await storeApi("GET", `/leads/${created.json.data.id}`)).json.data).toEqual(
      created.json.data,
    );
    expect(
      (await call("POST", "/stores/shop/leads", { email: "x@example.com" })).json.error,
    ).toMatchObject({ code: "invalid_field", field: "name" });
    expect(
      (await call("POST", "/stores/shop/leads", { id: 3, name: "x" })).json.error,
    ).toMatchObject({ code: "invalid_field", field: "id" });
  });
});

describe("POST /manage/v1/stores/{slug}/customers/{id}/sign-ins", () => {
  test("sets lastVisitAt (now or `at`); pending stays pending; locked is customer_locked", async () => {
    const customer = (
      await storeApi("POST", "/customers", { email: "c@example.com", firstName: "C" })
    ).json.data;
    expect(customer.status).toBe("pending");
    const noBody = await manage(
      server.url,
      "POST",
      `/stores/shop/customers/${customer.id}/sign-ins`,
      { key: hostKey },
    );
    expect(noBody.status).toBe(200);
    const signedIn = noBody.json;
    expect(signedIn.data.status).toBe("pending");
    expect(signedIn.data.lastVisitAt).not.toBeNull();
    // No body with the JSON type a client sends anyway is no body too; another type is not.
    const path = `/stores/shop/customers/${customer.id}/sign-ins`;
    for (const [type, status] of [
      ["application/json", 200],
      ["application/json; charset=utf-8", 200],
      ["text/plain", 415],
    ] as const) {
      const empty = await manage(server.url, "POST", path, {
        key: hostKey,
        headers: { "Content-Type": type },
      });
      expect([type, empty.status]).toEqual([type, status]);
    }
    // No bytes sent chunked (how an HTTP/2 proxy passes an empty upload on) are no body
    // too (it was 400 invalid_json, or 415 untyped); bytes sent untyped are not JSON.
    const chunked = async (type: string | undefined, text: string) => {
      const bytes = new TextEncoder().encode(text);
      const response = await fetch(`${server.url}/manage/v1${path}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${hostKey}`, ...(type && { "Content-Type": type }) },
        // Closed only later: a stream already closed is sent with Content-Length: 0.
        body: new ReadableStream({
          async pull(controller) {
            await Bun.sleep(10);
            if (bytes.length) controller.enqueue(bytes);
            controller.close();
          },
        }),
      });
      return [type, text, response.status, response.headers.get("content-type")];
    };
    const json = "application/json; charset=utf-8";
    expect(await chunked(undefined, "")).toEqual([undefined, "", 200, json]);
    expect(await chunked("application/json", "")).toEqual(["application/json", "", 200, json]);
    expect(await chunked(undefined, "{}")).toEqual([undefined, "{}", 415, json]);
    // Untyped bytes past the size limit are the same 415 (the media type is checked first).
    const untypedLarge = await fetch(`${server.url}/manage/v1${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${hostKey}` },
      body: new Uint8Array(2_000_000).fill(0x20),
    });
    expect([untypedLarge.status, ((await untypedLarge.json()) as any).error.code]).toEqual([
      415,
      "json_required",
    ]);

    const at = await call("POST", `/stores/shop/customers/${customer.id}/sign-ins`, {
      at: "2030-05-01T10:00:00+03:00",
    });
    expect(at.json.data.lastVisitAt).toBe("2030-05-01T10:00:00+03:00");
    expect(
      (await call("POST", `/stores/shop/customers/${customer.id}/sign-ins`, { at: "yesterday" }))
        .json.error,
    ).toMatchObject({
      code: "invalid_field",
      field: "at",
    });

    expect(
      (await storeApi("PATCH", `/customers/${customer.id}`, { active: false })).json.data.status,
    ).toBe("locked");
    const locked = await call("POST", `/stores/shop/customers/${customer.id}/sign-ins`, {});
    expect(locked.status).toBe(409);
    expect(locked.json.error.code).toBe("customer_locked");
    expect((await call("POST", "/stores/shop/customers/999/sign-ins", {})).status).toBe(404);
  });
});
