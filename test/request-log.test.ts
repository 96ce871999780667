import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadFixture } from "../src/fixtures/load";
import { KEYS, send, tempDir, testStore } from "./helpers";
import { spawnServer } from "./process";
import { testLocation } from "./sqld";

const dataDir = tempDir("storeapi-log-");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("request log", () => {
  test("one JSON line per request with the contract's fields, never a key or a body", async () => {
    await loadFixture(await testLocation(dataDir), { stores: [testStore()] });
    const server = await spawnServer(dataDir);
    const wrongKey = "svc_sk_neverLogThisWrongKey000000000000000000";
    await send(server.url, "/api/v1/customers?limit=1", { key: KEYS.read, headers: { "X-Request-Id": "log-test-1" } });
    await send(server.url, "/api/v1/customers", { key: null, headers: { "X-Api-Key": KEYS.all, "X-Request-Id": "log-test-2" }, method: "POST", body: { email: "secret-body@example.test" } });
    await send(server.url, "/api/v1/orders", { key: wrongKey, headers: { "X-Request-Id": "log-test-3" } });
    expect(await server.signal("SIGTERM")).toBe(0);
    const output = server.stdout();
    for (const secret of [KEYS.read, KEYS.all, wrongKey, "secret-body@example.test"]) expect(output).not.toContain(secret);
    const lines = output.trim().split("\n").map((line) => JSON.parse(line));
    const byId = (id: string) => lines.find((l) => l.requestId === id);
    expect(Object.keys(byId("log-test-1")).sort()).toEqual(["keyId", "level", "method", "ms", "path", "requestId", "status", "store", "time"]);
    expect(byId("log-test-1")).toMatchObject({ store: "shop1", keyId: 2, method: "GET", path: "/api/v1/customers", status: 200 });
    expect(byId("log-test-2")).toMatchObject({ store: "shop1", keyId: 1, method: "POST", status: 201 });
    expect(byId("log-test-3")).toMatchObject({ store: "shop1", keyId: null, status: 401 });
  });
});
