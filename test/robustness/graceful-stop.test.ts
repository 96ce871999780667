import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadFixture } from "../../src/load/load";
import { send, tempDir, testStore } from "../helpers";
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
});
