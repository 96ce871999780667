import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type ApiAnswer,
  KEYS,
  otherStore,
  startTestServer,
  type TestServer,
  testStore,
} from "../helpers";
import { runCli } from "../process";

/** Many clients at once, on one store and across stores: results stay exact, nothing is "locked". */

const at = "2026-04-01T10:00:00+02:00";
const orders = Array.from({ length: 20 }, (_, i) => ({
  id: i + 1,
  number: 7001 + i,
  status: 1,
  total: 20,
  customer: { id: null, name: "Concurrent", email: "", phone: "", address: "" },
  createdAt: at,
}));
const stores = [
  testStore({ orders }),
  otherStore({ orders }),
  testStore({ slug: "shop3", domain: "shop3.test", ownerEmail: "owner@shop3.test", orders }),
];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ stores, flags: { "rate-limit": "100000" } });
});
afterAll(() => server.stop());

function expectNoServerTrouble(answers: ApiAnswer[]): void {
  expect(answers.filter((a) => a.status >= 500).map((a) => a.text)).toEqual([]);
  expect(answers.filter((a) => /locked|busy/i.test(a.text)).map((a) => a.text)).toEqual([]);
}

describe("concurrency", () => {
  test("30 simultaneous creates with one email: exactly one wins, the rest are email_taken", async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        server.request("/api/v1/customers", {
          method: "POST",
          body: { email: i % 2 ? "Race@Example.test" : "race@example.test" },
        }),
      ),
    );
    expectNoServerTrouble(answers);
    expect(answers.filter((a) => a.status === 201).length).toBe(1);
    expect(answers.filter((a) => a.status === 409).map((a) => a.json.error.code)).toEqual(
      Array(29).fill("email_taken"),
    );
  });

  test("writes on three stores at once all succeed, and each store sees only its own", async () => {
    const hosts = [
      ["shop1.test", KEYS.all],
      ["shop2.test", KEYS.other],
      ["shop3.test", KEYS.all],
    ] as const;
    const answers = await Promise.all(
      hosts.flatMap(([host, key]) =>
        Array.from({ length: 40 }, (_, i) =>
          i % 2
            ? server.request(`/api/v1/orders/${(i % 20) + 1}`, {
                method: "PATCH",
                host,
                key,
                body: { adminNotes: `${host} ${i}` },
              })
            : server.request("/api/v1/products", {
                method: "POST",
                host,
                key,
                body: { name: `${host} ${i}`, price: i },
              }),
        ),
      ),
    );
    expectNoServerTrouble(answers);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 201).map((a) => a.text)).toEqual(
      [],
    );
    for (const [host, key] of hosts) {
      const products = await server.request("/api/v1/products?limit=100", { host, key });
      expect(products.json.data.length).toBe(20);
      expect(products.json.data.every((p: { name: string }) => p.name.startsWith(host))).toBe(true);
    }
  });

  test("the CLI writing keys while the server writes the same store: no lock errors either side", async () => {
    const load = Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        server.request(`/api/v1/orders/${(i % 20) + 1}`, {
          method: "PATCH",
          body: { adminNotes: `cli race ${i}` },
        }),
      ),
    );
    const created = await runCli(
      [
        "keys",
        "create",
        "shop1",
        "--name",
        "race",
        "--orders",
        "read",
        "--data",
        server.dataDir,
        "--json",
      ],
      { underTest: true },
    );
    expectNoServerTrouble(await load);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout).key as string;
    const deadline = Date.now() + 15_000; // about a second when idle; bounded generously for a loaded machine
    let answer = await server.request("/api/v1/orders/1", { key });
    while (answer.status !== 200 && Date.now() < deadline) {
      await Bun.sleep(100);
      answer = await server.request("/api/v1/orders/1", { key });
    }
    expect(answer.status).toBe(200);
  });
});
