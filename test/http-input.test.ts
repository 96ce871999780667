import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { storeDbPath } from "../src/db/pool";
import { BODY_BUDGET_BYTES, BODY_SHARE_BYTES, bodiesInFlight } from "../src/http/body-budget";
import { apiRoutes } from "../src/routes";
import { KEYS, otherStore, send, startTestServer, type TestServer, testStore } from "./helpers";
import { eventually } from "./mail-support";
import { TEST_LIBSQL } from "./sqld";

/** Client input that once hurt (issue 13, items 5, 6, 7, 13, 15): over HTTP to a real server. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    stores: [testStore({ customers: [{ id: 1, email: "one@example.com" }] }), otherStore()],
  });
});
afterAll(() => server.stop());

const writeRoutes = apiRoutes.filter((r) => r.method === "POST" || r.method === "PATCH");

describe("a body nested deeper than 32 levels", () => {
  const deep = (levels: number) => `{"name":${"[".repeat(levels)}${"]".repeat(levels)}}`;

  for (const route of writeRoutes) {
    const path = `/api/v1${route.path.replace(":id", "1")}`;
    for (const idempotencyKey of [undefined, `deep-${route.method}-${route.path}`]) {
      test(`${route.method} ${route.path} ${idempotencyKey ? "with" : "without"} Idempotency-Key is 400 invalid_field "body"`, async () => {
        const headers: Record<string, string> = { "Content-Type": "application/json" };
        if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
        const answer = await send(server.url, path, {
          method: route.method,
          raw: deep(20_000),
          headers,
        });
        expect(answer.status).toBe(400);
        expect(answer.json.error).toEqual({
          code: "invalid_field",
          field: "body",
          message: "The body is nested more than 32 levels deep; send flatter JSON.",
        });
      });
    }
  }

  test("half a million levels (1 MB, to the batch, which takes 1 MiB) are the same 400", async () => {
    const answer = await send(server.url, "/api/v1/products/batch", {
      method: "POST",
      raw: deep(500_000),
      headers: { "Content-Type": "application/json" },
    });
    expect(answer.json.error).toMatchObject({ code: "invalid_field", field: "body" });
  });

  test("32 levels are accepted as far as nesting goes (the field is then checked as usual)", async () => {
    const headers = { "Content-Type": "application/json" };
    const answer = await send(server.url, "/api/v1/products", {
      method: "POST",
      raw: deep(31),
      headers,
    });
    expect(answer.json.error.field).toBe("name");
    const deeper = await send(server.url, "/api/v1/products", {
      method: "POST",
      raw: deep(32),
      headers,
    });
    expect(deeper.json.error.field).toBe("body");
  });

  test("brackets inside strings do not count", async () => {
    const answer = await send(server.url, "/api/v1/products", {
      method: "POST",
      body: { name: `"\\${"[{".repeat(40)}`, price: 1 },
    });
    expect(answer.status).toBe(201);
  });
});

describe("echoed input is cut to 100 characters", () => {
  const longName = "n".repeat(120_000);
  const cut = `${"n".repeat(100)}…`;

  test("an unknown 120 KB field name: the 400 quotes 100 characters of it", async () => {
    const answer = await send(server.url, "/api/v1/customers", {
      method: "POST",
      body: { email: "a@example.com", [longName]: 1 },
    });
    expect(answer.status).toBe(400);
    expect(answer.json.error).toEqual({
      code: "invalid_field",
      field: cut,
      message: `Field "${cut}" is not allowed here.`,
    });
  });

  test("a long repeated query parameter, a long unknown path, a key in a path, a query or a body", async () => {
    const name = "q".repeat(5000);
    const repeated = await send(server.url, `/api/v1/customers?${name}=1&${name}=2`);
    expect(repeated.json.error.field).toBe(`${"q".repeat(100)}…`);
    expect(repeated.json.error.message).toBe(
      `Parameter "${"q".repeat(100)}…" may be given only once.`,
    );
    const path = `/api/v1/${"p".repeat(5000)}`;
    const missing = await send(server.url, path);
    expect(missing.json.error.message).toBe(`There is no endpoint at ${path.slice(0, 100)}….`);
    // A key pasted into a path comes back as its hint, as the log shows it; the management
    // API's 404 is cut short too.
    const key = `svc_sk_${"A".repeat(36)}0001`;
    const pasted = await send(server.url, `/${key}/x`);
    expect(pasted.json.error.message).toBe(
      "There is no endpoint at /svc_sk_…0001/x; the API lives under /api/v1/.",
    );
    // A key's body pasted without its prefix, or split by a space, is cut too.
    const body = "Xq3vR8tLm2Zp9KdW4yBn7HcF1sJg6TaE0uVo5NiQ";
    const bare = await send(server.url, `/api/v1/${body}`);
    expect(bare.json.error.message).toBe("There is no endpoint at /api/v1/…5NiQ.");
    const splitName = await send(
      server.url,
      `/api/v1/customers?svc_sk_${body.slice(0, 6)}%20${body.slice(6)}=1`,
    );
    expect(splitName.json.error.field).toBe("svc_sk_…3vR8 …5NiQ");
    // A field's own name of letters and digits is shown as it is.
    const named = await send(server.url, "/api/v1/customers", {
      method: "POST",
      body: { email: "a@example.com", shippingAddressLine2: "x" },
    });
    expect(named.json.error.field).toBe("shippingAddressLine2");
    // So does one pasted as a query parameter's or a body field's name.
    const asParameter = await send(server.url, `/api/v1/customers?${key}=1`);
    expect(asParameter.json.error).toEqual({
      code: "invalid_parameter",
      field: "svc_sk_…0001",
      message: 'Parameter "svc_sk_…0001" is not allowed here.',
    });
    const asField = await send(server.url, "/api/v1/customers", {
      method: "POST",
      body: { email: "a@example.com", [key]: 1 },
    });
    expect(asField.json.error).toEqual({
      code: "invalid_field",
      field: "svc_sk_…0001",
      message: 'Field "svc_sk_…0001" is not allowed here.',
    });
    const manage = await fetch(`${server.url}/manage/v1/${key}/${"m".repeat(5000)}`, {
      method: "OPTIONS",
    });
    expect((await manage.json()).error.message).toBe(
      `There is no endpoint at ${`/manage/v1/svc_sk_…0001/${"m".repeat(5000)}`.slice(0, 100)}….`,
    );
  });

  // Measures the store file on disk.
  test.skipIf(TEST_LIBSQL)(
    "ten such requests with Idempotency-Keys do not grow the store by megabytes",
    async () => {
      const sizeOfStore = () =>
        ["", "-wal"].reduce(
          (sum, suffix) =>
            sum +
            (statSync(storeDbPath(server.dataDir, "shop1") + suffix, { throwIfNoEntry: false })
              ?.size ?? 0),
          0,
        );
      const before = sizeOfStore();
      for (let i = 0; i < 10; i++) {
        const answer = await send(server.url, "/api/v1/customers", {
          method: "POST",
          body: { email: "b@example.com", [longName]: i },
          headers: { "Idempotency-Key": `long-name-${i}` },
        });
        expect(answer.json.error.field).toBe(cut);
      }
      const replay = await send(server.url, "/api/v1/customers", {
        method: "POST",
        body: { email: "b@example.com", [longName]: 3 },
        headers: { "Idempotency-Key": "long-name-3" },
      });
      expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
      expect(sizeOfStore() - before).toBeLessThan(500_000);
    },
  );
});

describe("how large a body may be", () => {
  const sized = (bytes: number) => {
    const body = JSON.stringify({ name: "n", price: 1, description: "" });
    return body.replace('""', `"${"d".repeat(bytes - body.length)}"`);
  };
  const post = (path: string, raw: string) =>
    send(server.url, path, {
      method: "POST",
      raw,
      headers: { "Content-Type": "application/json" },
    });

  test("one record's body takes 128 KiB; one byte more is 413 naming the limit", async () => {
    // 128 KiB is past the longest valid product: its description is then too long.
    const atLimit = await post("/api/v1/products", sized(131_072));
    expect([atLimit.status, atLimit.json.error.field]).toEqual([400, "description"]);
    const over = await post("/api/v1/products", sized(131_073));
    expect([over.status, over.json.error]).toEqual([
      413,
      {
        code: "payload_too_large",
        message: "The body is larger than 131072 bytes; send less per request.",
      },
    ]);
  });

  test("the longest valid customer, every character an escaped emoji, fits", async () => {
    const emoji = (n: number) => "\\ud83d\\ude00".repeat(n);
    const raw = `{"email":"longest@example.com","firstName":"${emoji(100)}","lastName":"${emoji(100)}","notes":"${emoji(5000)}"}`;
    expect(raw.length).toBeGreaterThan(62_000);
    expect((await post("/api/v1/customers", raw)).status).toBe(201);
  });

  test("a chunked body for one record is cut off at 128 KiB as it arrives", async () => {
    const chunk = new TextEncoder().encode(" ".repeat(16_384));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 64)
          controller.enqueue(chunk); // 1 MiB, if it were all read
        else controller.close();
      },
    });
    const response = await fetch(`${server.url}/api/v1/customers`, {
      method: "POST",
      headers: {
        Host: "shop1.test",
        Authorization: `Bearer ${KEYS.all}`,
        "Content-Type": "application/json",
      },
      body,
    });
    expect([response.status, (await response.json()).error.message]).toEqual([
      413,
      "The body is larger than 131072 bytes; send less per request.",
    ]);
  });

  test("a batch's body takes 1 MiB", async () => {
    const item = { id: 1, name: "n".repeat(100), description: "d".repeat(300) };
    const items = Array.from({ length: 500 }, () => item);
    const body = JSON.stringify({ items });
    expect(body.length).toBeGreaterThan(131_072);
    expect((await post("/api/v1/products/batch", body)).status).toBe(200);
    const over = await post(
      "/api/v1/products/batch",
      `${body}${" ".repeat(1_048_577 - body.length)}`,
    );
    expect([over.status, over.json.error.message]).toEqual([
      413,
      "The body is larger than 1048576 bytes; send less per request.",
    ]);
  });
});

// Reaches into the server's module: in process only.
describe.skipIf(Boolean(process.env.STOREAPI_BIN))("bodies read at once share one budget", () => {
  /** A connection that declares a 128 KiB product and sends 1 KB of it: held while the rest is awaited. */
  async function halfSent() {
    const socket = await Bun.connect({
      hostname: "127.0.0.1",
      port: Number(new URL(server.url).port),
      socket: { data() {} },
    });
    socket.write(
      `POST /api/v1/products HTTP/1.1\r\nHost: shop1.test\r\nAuthorization: Bearer ${KEYS.all}\r\nContent-Type: application/json\r\nContent-Length: 131072\r\n\r\n${" ".repeat(1000)}`,
    );
    await eventually(() => (bodiesInFlight.bytesInUse === 131_072 ? true : undefined));
    return socket;
  }

  const product = `{"name":"n","price":1}${" ".repeat(100_000)}`; // 100 KB of it
  const post = (host = "shop1.test", key: string = KEYS.all) =>
    send(server.url, "/api/v1/products", {
      method: "POST",
      raw: product,
      host,
      key,
      headers: { "Content-Type": "application/json" },
    });
  const busy = (message: string) => [503, "1", { code: "service_unavailable", message }];
  const answered = (answer: Awaited<ReturnType<typeof post>>) => [
    answer.status,
    answer.headers.get("retry-after"),
    answer.json.error,
  ];

  test("a body past it is 503 with Retry-After before it is read; its room comes back when a reader leaves", async () => {
    bodiesInFlight.resize(200 * 1024, BODY_SHARE_BYTES);
    const socket = await halfSent();
    try {
      expect(answered(await post("shop2.test", KEYS.other))).toEqual(
        busy("The server is receiving too many request bodies at once; retry in a moment."),
      );
      socket.end();
      await eventually(() => (bodiesInFlight.bytesInUse === 0 ? true : undefined));
      expect((await post()).status).toBe(201);
    } finally {
      bodiesInFlight.resize(BODY_BUDGET_BYTES, BODY_SHARE_BYTES);
      socket.end();
    }
  });

  test("one key holds at most its share: its next body is refused, another key's is read", async () => {
    bodiesInFlight.resize(BODY_BUDGET_BYTES, 200 * 1024);
    const socket = await halfSent();
    try {
      expect(answered(await post())).toEqual(
        busy("This key is sending too many request bodies at once; retry in a moment."),
      );
      expect((await post("shop2.test", KEYS.other)).status).toBe(201);
    } finally {
      bodiesInFlight.resize(BODY_BUDGET_BYTES, BODY_SHARE_BYTES);
      socket.end();
    }
  });
});

describe("a missing required field", () => {
  test("POST /products without name says name is required", async () => {
    const answer = await send(server.url, "/api/v1/products", {
      method: "POST",
      body: { price: 1 },
    });
    expect(answer.json.error).toEqual({
      code: "invalid_field",
      field: "name",
      message: 'Field "name" is required.',
    });
  });

  test("POST /customers without email says email is required", async () => {
    const answer = await send(server.url, "/api/v1/customers", {
      method: "POST",
      body: { name: "Dana" },
    });
    expect(answer.json.error).toEqual({
      code: "invalid_field",
      field: "email",
      message: 'Field "email" is required.',
    });
  });

  test("an unknown field is still not allowed", async () => {
    const answer = await send(server.url, "/api/v1/products", {
      method: "POST",
      body: { name: "x", price: 1, colour: "red" },
    });
    expect(answer.json.error).toEqual({
      code: "invalid_field",
      field: "colour",
      message: 'Field "colour" is not allowed here.',
    });
  });
});

test('every 401 carries WWW-Authenticate: Bearer realm="storeapi" and the same body', async () => {
  const answers = await Promise.all([
    send(server.url, "/api/v1/orders", { key: null }),
    send(server.url, "/api/v1/orders", { key: "svc_sk_unknownKey000000000000000000000000000000" }),
    send(server.url, "/api/v1/products", { method: "POST", key: "nonsense", body: {} }),
  ]);
  for (const answer of answers) {
    expect(answer.status).toBe(401);
    expect(answer.headers.get("WWW-Authenticate")).toBe('Bearer realm="storeapi"');
    expect(answer.json.error.code).toBe("unauthorized");
  }
});

describe("service paths answer other methods with 405 and Allow: GET, HEAD, like any /api/v1 path", () => {
  for (const path of ["/healthz", "/api/v1/openapi.json", "/api/v1/docs"]) {
    test(`${path}: POST, PUT and DELETE with a key; without one 401, on an unknown host 404`, async () => {
      for (const method of ["POST", "PUT", "DELETE"]) {
        const answer = await send(server.url, path, { method, body: {} });
        expect(answer.status).toBe(405);
        expect(answer.headers.get("Allow")).toBe("GET, HEAD");
        expect(answer.json.error).toEqual({
          code: "method_not_allowed",
          message: "This path accepts only GET, HEAD.",
        });
        expect((await send(server.url, path, { method, key: null })).status).toBe(401);
        expect((await send(server.url, path, { method, host: "nowhere.example" })).status).toBe(
          404,
        );
      }
      const options = await send(server.url, path, {
        method: "OPTIONS",
        key: null,
        host: "nowhere.example",
      });
      expect(options.status).toBe(405);
      expect(options.headers.get("Allow")).toBe("GET, HEAD");
    });
  }
});
