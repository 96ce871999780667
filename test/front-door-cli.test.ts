import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ApiAnswer, startTestServer, type TestServer, tempDir, testStore } from "./helpers";
import { runCli } from "./process";

/**
 * Black-box: keys created or deleted with the CLI while the server runs take effect on
 * it within about a second, without a restart.
 */

let dir: string;
let server: TestServer;
beforeAll(async () => {
  dir = tempDir();
  // Loaded by `storeapi load` in its own process, as an operator would: a fixture loaded
  // inside this process breaks the server's reads after a CLI write (reported; db layer).
  writeFileSync(join(dir, "fixture.json"), JSON.stringify({ stores: [testStore()] }));
  const loaded = await runCli(["load", join(dir, "fixture.json"), "--data", join(dir, "data")]);
  if (loaded.code !== 0) throw new Error(loaded.stderr);
  // 401s while polling must not block 127.0.0.1.
  server = await startTestServer({
    dataDir: join(dir, "data"),
    flags: { "auth-failure-limit": "100000" },
  });
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const probe = "/api/v1/__cli-probe";
const authenticated = (a: ApiAnswer) =>
  a.status === 404 && a.headers.get("ratelimit-limit") !== null;

/**
 * Polls until `done` holds; returns the last answer. The server sees a change within a
 * second on an idle machine; the bound is generous so a loaded one does not fail the test.
 */
async function pollUntil(key: string, done: (a: ApiAnswer) => boolean): Promise<ApiAnswer> {
  const deadline = Date.now() + 15_000;
  let answer = await server.request(probe, { key });
  while (!done(answer) && Date.now() < deadline) {
    await Bun.sleep(50);
    answer = await server.request(probe, { key });
  }
  return answer;
}

describe("keys from the CLI on a running server", () => {
  test("a created key works within a second; a deleted one is 401 within a second", async () => {
    const created = await runCli([
      "keys",
      "create",
      "shop1",
      "--name",
      "live",
      "--orders",
      "read",
      "--data",
      server.dataDir,
      "--json",
    ]);
    expect(created.code).toBe(0);
    const key: string = created.json.key;
    expect(key).toMatch(/^svc_sk_[A-Za-z0-9]{32,}$/);
    expect(created.json.hint).toBe(`svc_sk_…${key.slice(-4)}`);

    const works = await pollUntil(key, authenticated);
    expect(works.status).toBe(404);
    expect(works.headers.get("ratelimit-remaining")).toBe("119");

    const deleted = await runCli([
      "keys",
      "delete",
      "shop1",
      String(created.json.id),
      "--data",
      server.dataDir,
      "--json",
    ]);
    expect(deleted.code).toBe(0);
    const refused = await pollUntil(key, (a) => a.status === 401);
    expect(refused.status).toBe(401);
  });

  test("lastUsedAt is recorded for a used key; the key itself is never listed", async () => {
    const created = await runCli([
      "keys",
      "create",
      "shop1",
      "--name",
      "used",
      "--orders",
      "read",
      "--data",
      server.dataDir,
      "--json",
    ]);
    expect(created.code).toBe(0);
    expect(authenticated(await pollUntil(created.json.key, authenticated))).toBe(true);
    const listUsed = async () => {
      const list = await runCli(["keys", "list", "shop1", "--data", server.dataDir, "--json"]);
      return {
        text: list.stdout,
        row: list.json.find((k: { id: number }) => k.id === created.json.id),
      };
    };
    // Written off the request path: poll (bounded) until it lands.
    const deadline = Date.now() + 15_000;
    let { text: listed, row } = await listUsed();
    while (!row?.lastUsedAt && Date.now() < deadline) {
      await Bun.sleep(100);
      ({ text: listed, row } = await listUsed());
    }
    expect(row?.lastUsedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[23]:00$/);
    expect(listed).not.toContain(created.json.key);
  });
});
