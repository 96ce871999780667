import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { send, tempDir, testStore } from "./helpers";
import { runCli, type ServerProcess, serverRunsOnDeno, spawnServer } from "./process";
import { type Sqld, startSqld, TEST_LIBSQL } from "./sqld";

/**
 * Two `serve` nodes sharing one libSQL server (issue 20): what each keeps in process
 * (the queue of concurrent duplicates) no longer sees the other node's requests, so an
 * Idempotency-Key is held in the store's database while its create runs.
 */
// Starts its own sqld: under STOREAPI_TEST_LIBSQL the harness would add a second one.
describe.skipIf(TEST_LIBSQL || serverRunsOnDeno())("two nodes on one libSQL server", () => {
  const dir = tempDir("storeapi-two-nodes-");
  let sqld: Sqld;
  let nodes: ServerProcess[] = [];

  beforeAll(async () => {
    sqld = await startSqld();
    const fixture = join(dir, "fixture.json");
    writeFileSync(fixture, JSON.stringify({ stores: [testStore()] }));
    const loaded = await runCli(["load", fixture, ...sqld.flags, "--data", join(dir, "a")]);
    expect(loaded.code).toBe(0);
    mkdirSync(join(dir, "b"), { mode: 0o700 });
    nodes = [
      await spawnServer(join(dir, "a"), sqld.flags),
      await spawnServer(join(dir, "b"), sqld.flags),
    ];
  });
  afterAll(async () => {
    for (const node of nodes) if (node.proc.exitCode === null) await node.signal("SIGKILL");
    await sqld?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = (node: ServerProcess, email: string, key: string) =>
    send(node.url, "/api/v1/customers", {
      method: "POST",
      body: { email, firstName: "Dana" },
      headers: { "Idempotency-Key": key },
    });

  const customersCalled = async (email: string) =>
    (await send(nodes[1].url, `/api/v1/customers?email=${encodeURIComponent(email)}`)).json.data
      .length;

  test("one Idempotency-Key sent to both nodes at once creates one customer; every answer is the same", async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => create(nodes[i % 2], "both@x.test", "both-nodes-1")),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true")).toHaveLength(11);
    expect(await customersCalled("both@x.test")).toBe(1);
  });

  test("a node killed with kill -9 mid-way: retries with the same keys on the other node create each customer once", async () => {
    const acknowledged = new Set<number>();
    const sends = Array.from({ length: 30 }, async (_, i) => {
      if (i === 15) nodes[0].proc.kill("SIGKILL");
      const node = nodes[i % 2];
      const answer = await create(node, `k${i}@x.test`, `kill-${i}`).catch(() => null);
      if (answer?.status === 201) acknowledged.add(i);
    });
    await Promise.all(sends);
    await nodes[0].proc.exited;
    // What node A never answered is sent again, with its key, to node B.
    for (let i = 0; i < 30; i++) {
      const answer = await create(nodes[1], `k${i}@x.test`, `kill-${i}`);
      expect(answer.status).toBe(201);
      if (acknowledged.has(i)) expect(answer.headers.get("idempotent-replayed")).toBe("true");
    }
    for (let i = 0; i < 30; i++) expect(await customersCalled(`k${i}@x.test`)).toBe(1);
  });
});
