import { describe, expect, test } from "bun:test";
import { markdownTable } from "../scripts/bench/report";

describe("bench report", () => {
  test("a Markdown table keeps its cells as written, a | escaped", () => {
    expect(
      markdownTable(["Target", "Goal"], [["GET one order, 2,000 stores", "≥ 0.9 | 1.2×"]]),
    ).toBe(
      [
        "| Target | Goal |",
        "| --- | ---: |",
        "| GET one order, 2,000 stores | ≥ 0.9 \\| 1.2× |",
      ].join("\n"),
    );
  });
});
