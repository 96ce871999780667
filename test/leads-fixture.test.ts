import { describe, expect, test } from "bun:test";
import { validateFixture } from "../src/fixtures/load";

const store = (leads: unknown[]) => ({ stores: [{ slug: "a", domain: "a.test", plan: "growth", ownerEmail: "o@a.test", leads }] });
const rows = (leads: unknown[]) => validateFixture(store(leads), { now: 1_000 })[0].sections.find((s) => s.section.name === "leads")?.rows;
const refusal = (leads: unknown[]) => {
  try {
    validateFixture(store(leads), { now: 1_000 });
  } catch (error) {
    return (error as Error).message;
  }
  return "accepted";
};

describe("lead fixture records", () => {
  test("defaults: nullable fields null, handled false, createdAt now", () => {
    expect(rows([{ name: "Dana" }])).toEqual([
      { id: null, name: "Dana", email: null, phone: null, message: null, source: null, handled: 0, notes: null, created_at: 1_000 },
    ]);
  });

  test("broken records are refused with their path", () => {
    expect(refusal([{ name: "A", email: "not-an-email" }])).toBe("stores[0].leads[0].email: must be a valid email address.");
    expect(refusal([{ id: 2, name: "A" }, { id: 2, name: "B" }])).toBe("stores[0].leads[1].id: lead id 2 appears twice.");
    expect(refusal([{ email: "a@b.test" }])).toBe("stores[0].leads[0].name: is required");
    expect(refusal([{ name: "A", phone: "1".repeat(33) }])).toStartWith("stores[0].leads[0].phone:");
  });

  test("records with an id are inserted before those without, so ids never collide", async () => {
    const { startTestServer, testStore } = await import("./helpers");
    const server = await startTestServer({ stores: [testStore({ leads: [{ name: "no id" }, { id: 1, name: "one" }] })] });
    try {
      const list = await server.request("/api/v1/leads");
      expect(list.json.data.map((l: { id: number; name: string }) => [l.id, l.name]).sort()).toEqual([
        [1, "one"],
        [2, "no id"],
      ]);
    } finally {
      await server.stop();
    }
  });
});
