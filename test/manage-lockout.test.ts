import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { tempDir } from "./helpers";
import { dataDirIn, manage, newHostKey, storeBody } from "./manage-support";
import { type ServerProcess, spawnServer } from "./process";

// Each test starts CLI processes or waits for a reload: on a loaded machine that takes seconds.
setDefaultTimeout(60_000);

let dir: string;
let server: ServerProcess;
let hostKey: string;

beforeAll(async () => {
  dir = tempDir("storeapi-manage-lockout-");
  hostKey = await newHostKey(dataDirIn(dir));
  server = await spawnServer(dataDirIn(dir), ["--auth-failure-limit", "4"]);
});

afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

test("failed host keys and failed store keys count toward one per-IP lockout, which blocks both APIs", async () => {
  expect(
    (await manage(server.url, "POST", "/stores", { key: hostKey, body: storeBody("lock1") }))
      .status,
  ).toBe(201);
  const storeApi = (key: string) =>
    fetch(`${server.url}/api/v1/orders`, {
      headers: { Host: "lock1.localhost", Authorization: `Bearer ${key}` },
    });
  expect((await storeApi(`svc_sk_${"b".repeat(40)}`)).status).toBe(401);
  expect((await storeApi(hostKey)).status).toBe(401);
  expect(
    (await manage(server.url, "GET", "/stores", { key: `svc_sk_${"c".repeat(40)}` })).status,
  ).toBe(401);
  expect(
    (await manage(server.url, "GET", "/stores", { key: `svc_hk_${"d".repeat(40)}` })).status,
  ).toBe(401);
  const blocked = await manage(server.url, "GET", "/stores", { key: hostKey });
  expect(blocked.status).toBe(429);
  expect(blocked.json.error.code).toBe("too_many_failures");
  expect(Number(blocked.headers.get("Retry-After"))).toBeGreaterThan(0);
  expect((await storeApi(`svc_sk_${"b".repeat(40)}`)).status).toBe(429);
});
