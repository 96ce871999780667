import { describe, expect, test } from "bun:test";
import { refusalOf, sectionRows } from "./fixture-records";

const rows = (leads: unknown[]) => sectionRows("leads", leads);
const refusal = (leads: unknown[]) => refusalOf("leads", leads);

describe("lead fixture records", () => {
  test("defaults: nullable fields null, handled false, createdAt now", () => {
    expect(rows([{ name: "Dana" }])).toEqual([
      {
        id: null,
        name: "Dana",
        email: null,
        phone: null,
        message: null,
        source: null,
        handled: 0,
        notes: null,
        created_at: 1_000,
      },
    ]);
  });

  test("broken records are refused with their path", () => {
    expect(refusal([{ name: "A", email: "not-an-email" }])).toBe(
      "stores[0].leads[0].email: must be a valid email address.",
    );
    expect(
      refusal([
        { id: 2, name: "A" },
        { id: 2, name: "B" },
      ]),
    ).toBe("stores[0].leads[1].id: lead id 2 appears twice.");
    expect(refusal([{ id: 2 ** 52 + 1, name: "A" }])).toBe(
      "stores[0].leads[0].id: must be a positive whole number up to 4503599627370496.",
    );
    expect(refusal([{ email: "a@b.test" }])).toBe("stores[0].leads[0].name: is required");
    expect(refusal([{ name: "A", phone: "1".repeat(33) }])).toStartWith(
      "stores[0].leads[0].phone:",
    );
  });

  test("records with an id are inserted before those without, so ids never collide", async () => {
    const { startTestServer, testStore } = await import("./helpers");
    const server = await startTestServer({
      stores: [testStore({ leads: [{ name: "no id" }, { id: 1, name: "one" }] })],
    });
    try {
      const list = await server.request("/api/v1/leads");
      expect(
        list.json.data.map((l: { id: number; name: string }) => [l.id, l.name]).sort(),
      ).toEqual([
        [1, "one"],
        [2, "no id"],
      ]);
    } finally {
      await server.stop();
    }
  });
});
