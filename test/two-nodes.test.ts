import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { claimScope } from "../src/db/idempotency";
import { LibsqlLocation } from "../src/db/location";
import { fingerprint } from "../src/http/idempotency";
import { digestSecret } from "../src/keys/secret";
import { KEYS, otherStore, send, tempDir, testStore } from "./helpers";
import { startSmtp } from "./mail-support";
import { nginx, startNginx } from "./nginx";
import { runCli, type ServerProcess, serverRunsOnDeno, spawnServer } from "./process";
import { type Sqld, startSqld, TEST_LIBSQL } from "./sqld";

/**
 * Two `serve` nodes sharing one libSQL server (issue 20): what each keeps in process
 * (the queue of concurrent duplicates) no longer sees the other node's requests, so an
 * Idempotency-Key is held in the store's database while its create runs.
 */
// Starts its own sqld: under STOREAPI_TEST_LIBSQL the harness would add a second one.
/** Which of `nodes` logged the request with this id (request lines are written in batches). */
async function nodeThatServed(nodes: ServerProcess[], requestId: string): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const served = nodes.findIndex((node) => node.stdout().includes(requestId));
    if (served >= 0) return served;
    await Bun.sleep(100);
  }
  throw new Error(`no node logged request ${requestId}`);
}

describe.skipIf(TEST_LIBSQL || serverRunsOnDeno())("two nodes on one libSQL server", () => {
  let dir = ""; // made in beforeAll: a skipped describe runs its body, never its hooks
  let sqld: Sqld;
  let nodes: ServerProcess[] = [];

  beforeAll(async () => {
    dir = tempDir("storeapi-two-nodes-");
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
    if (dir) rmSync(dir, { recursive: true, force: true });
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

  test("a duplicate of a create still running on a node that stopped waits 8 s, then 503 with Retry-After; after it, the create is taken over", async () => {
    const location = new LibsqlLocation({
      url: sqld.url,
      adminUrl: sqld.adminUrl,
      authToken: null,
    });
    const db = await location.openStore("shop1");
    const body = { email: "held@x.test", firstName: "Dana" };
    try {
      const key = await db.get<{ id: number }>("SELECT id FROM api_keys WHERE digest = ?", [
        digestSecret(KEYS.all),
      ]);
      const print = fingerprint("POST", "/api/v1/customers", body);
      const scope = { keyId: key?.id ?? 0, key: "held-1" };
      // Claimed as if 3 s from now: it runs out ~13 s from here, well after the 8 s wait,
      // however slowly this host answers.
      expect(await claimScope(db, scope, print, Date.now() + 3_000)).not.toBeNull();
      const started = performance.now();
      const held = await create(nodes[0], body.email, "held-1");
      expect(performance.now() - started).toBeGreaterThanOrEqual(8_000);
      expect([held.status, held.json.error.code]).toEqual([503, "service_unavailable"]);
      const retryAfter = Number(held.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(5);
      expect(await customersCalled(body.email)).toBe(0);
      await Bun.sleep(retryAfter * 1000);
      expect((await create(nodes[1], body.email, "held-1")).status).toBe(201);
      expect(await customersCalled(body.email)).toBe(1);
    } finally {
      await db.close();
    }
  });

  test.skipIf(!nginx)(
    "through nginx hashing by Host: the store's node killed with kill -9 mid-way, every create retried through the proxy exists once",
    async () => {
      const pair: ServerProcess[] = [];
      for (const name of ["c", "d"]) {
        mkdirSync(join(dir, name), { mode: 0o700 });
        pair.push(await spawnServer(join(dir, name), sqld.flags));
      }
      const proxy = await startNginx(pair.map((node) => node.url.replace("http://", "")));
      try {
        const through = (i: number) =>
          send(proxy.url, "/api/v1/customers", {
            method: "POST",
            body: { email: `p${i}@x.test`, firstName: "Dana" },
            headers: { "Idempotency-Key": `proxy-${i}` },
          }).catch(() => null);
        // The node the proxy sends shop1.test to: the one that logged the request's id.
        const first = await through(0);
        expect(first?.status).toBe(201);
        const served = await nodeThatServed(pair, first?.headers.get("x-request-id") ?? "-");
        const acknowledged = new Set<number>([0]);
        await Promise.all(
          Array.from({ length: 29 }, async (_, n) => {
            const i = n + 1;
            if (i === 15) pair[served].proc.kill("SIGKILL");
            if ((await through(i))?.status === 201) acknowledged.add(i);
          }),
        );
        // Every create is sent again through the proxy, which now finds only the node left.
        for (let i = 0; i < 30; i++) {
          const answer = await through(i);
          expect([i, answer?.status, answer?.status === 201 ? "" : proxy.log()]).toEqual([
            i,
            201,
            "",
          ]);
          if (acknowledged.has(i)) expect(answer?.headers.get("idempotent-replayed")).toBe("true");
        }
        const survivor = pair[1 - served];
        for (let i = 0; i < 30; i++) {
          const found = await send(survivor.url, `/api/v1/customers?email=p${i}%40x.test`);
          expect([i, found.json.data.length]).toEqual([i, 1]);
        }
      } finally {
        await proxy.stop();
        for (const node of pair) if (node.proc.exitCode === null) await node.signal("SIGKILL");
      }
    },
  );

  test.skipIf(!nginx)(
    "every status email queued through the proxy is sent once (the one in the killed node's hands at most twice), also after a kill -9 and restart",
    async () => {
      const orders = Array.from({ length: 20 }, (_, i) => ({
        id: i + 1,
        number: 2001 + i,
        status: 1,
        total: 10,
        customer: { name: "Dana", email: `order${i + 1}@x.test` },
      }));
      const fixture = join(dir, "orders.json");
      writeFileSync(fixture, JSON.stringify({ stores: [otherStore({ orders })] }));
      expect((await runCli(["load", fixture, ...sqld.flags, "--data", join(dir, "a")])).code).toBe(
        0,
      );
      const peer = await startSmtp();
      const flags = [...sqld.flags, "--smtp", peer.url];
      const dirs = ["e", "f"].map((name) => join(dir, name));
      for (const nodeDir of dirs) mkdirSync(nodeDir, { mode: 0o700 });
      const pair = [await spawnServer(dirs[0], flags), await spawnServer(dirs[1], flags)];
      const proxy = await startNginx(pair.map((node) => node.url.replace("http://", "")));
      const ship = (id: number) =>
        send(proxy.url, `/api/v1/orders/${id}`, {
          method: "PATCH",
          host: "shop2.test",
          key: KEYS.other,
          body: { status: 3, notifyCustomer: true },
        }).catch(() => null);
      try {
        const first = await ship(1);
        expect(first?.status).toBe(200);
        const id = first?.headers.get("x-request-id") ?? "-";
        const served = await nodeThatServed(pair, id);
        await Promise.all(
          orders.slice(1).map(async ({ id }) => {
            if (id === 10) pair[served].proc.kill("SIGKILL");
            await ship(id);
          }),
        );
        // Whatever was not answered is sent again through the proxy, which now finds only
        // the node left; a status already set changes nothing.
        for (const { id } of orders) expect((await ship(id))?.status).toBe(200);
        // The killed node comes back with its own directory (its name) and frees its claims.
        pair[served] = await spawnServer(dirs[served], flags);
        await peer.waitFor(orders.length, 30_000);
        await Bun.sleep(500);
        const subjects = peer.messages.map((m) => m.headers.subject);
        const copies = orders.map(
          (order) => subjects.filter((s) => s === `Order #${order.number}: Shipped`).length,
        );
        // Each once; only a message the killed node had in hand may go a second time.
        expect(copies.every((n) => n >= 1)).toBe(true);
        expect(copies.filter((n) => n > 1).length).toBeLessThanOrEqual(1);
        expect(Math.max(...copies)).toBeLessThanOrEqual(2);
      } finally {
        await proxy.stop();
        for (const node of pair) if (node.proc.exitCode === null) await node.signal("SIGKILL");
        await peer.close();
      }
    },
  );

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
