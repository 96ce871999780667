import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { connect } from "node:net";
import { loadFixture } from "../../src/load/load";
import { KEYS, send, tempDir, testStore } from "../helpers";
import { spawnServer } from "../process";
import { testLocation } from "../sqld";

const orders = Array.from({ length: 40 }, (_, i) => ({
  id: i + 1,
  number: 5001 + i,
  status: 1,
  total: 50,
  customer: { id: null, name: "Yossi", email: "", phone: "", address: "" },
  createdAt: "2026-02-01T10:00:00+02:00",
}));

const dataDir = tempDir("storeapi-graceful-");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("graceful stop", () => {
  test("SIGTERM under load: answers in flight complete, later connections are refused, exit 0, nothing lost", async () => {
    await loadFixture(await testLocation(dataDir), { stores: [testStore({ orders })] });
    const server = await spawnServer(dataDir, ["--rate-limit", "1000000"]);
    const acked = new Map<number, string>();
    const statuses: number[] = [];
    let refused = 0;
    const clients = Array.from({ length: 8 }, async (_, c) => {
      for (let i = 0; ; i++) {
        const id = c * 5 + (i % 5) + 1;
        const note = `note ${c}-${i}`;
        try {
          const answer = await send(server.url, `/api/v1/orders/${id}`, {
            method: "PATCH",
            body: { adminNotes: note },
          });
          statuses.push(answer.status);
          expect(answer.json.ok).toBe(answer.status === 200);
          if (answer.status === 200) acked.set(id, note);
        } catch {
          refused++;
          return;
        }
      }
    });
    // Stop once every client has had answers, however slow the machine (bounded).
    const deadline = Date.now() + 30_000;
    while (statuses.length < 16 && Date.now() < deadline) await Bun.sleep(20);
    const exit = server.signal("SIGTERM");
    await Promise.all(clients);
    expect(await exit).toBe(0);
    expect(refused).toBe(8);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);

    const restarted = await spawnServer(dataDir, ["--rate-limit", "1000000"]);
    for (const [id, note] of acked) {
      const answer = await send(restarted.url, `/api/v1/orders/${id}`);
      expect(answer.json.data.adminNotes).toBe(note);
    }
    expect(await restarted.signal("SIGTERM")).toBe(0);
  }, 60_000);

  test("a second SIGTERM while it stops is ignored: the request in flight is answered, exit 0", async () => {
    const server = await spawnServer(dataDir);
    const { hostname, port } = new URL(server.url);
    const body = JSON.stringify({ name: "Sent slowly", price: 1 });
    const answer = Promise.withResolvers<string>();
    let received = "";
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST /api/v1/products HTTP/1.1\r\nHost: shop1.test\r\nAuthorization: Bearer ${KEYS.all}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n` +
          body.slice(0, 10),
      );
    });
    socket.on("data", (chunk) => {
      received += chunk.toString();
    });
    socket.on("close", () => answer.resolve(received));
    await Bun.sleep(300); // the request is in flight, waiting for the rest of its body
    server.proc.kill("SIGTERM");
    await Bun.sleep(300); // stopping: it waits for the request
    server.proc.kill("SIGTERM");
    await Bun.sleep(300);
    socket.write(body.slice(10));
    expect((await answer.promise).split("\r\n")[0]).toBe("HTTP/1.1 201 Created");
    expect(await server.proc.exited).toBe(0);
    expect(server.stdout().match(/"msg":"stopping"/g)).toEqual(['"msg":"stopping"']);
  }, 120_000);
});
