import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ensureBenchData } from "../scripts/bench/generate";
import { markdownTable } from "../scripts/bench/report";
import { Platform } from "../src/db/platform";
import { tempDir } from "./helpers";

describe("bench data", () => {
  test("is generated from nothing, every store registered (a fresh clone's first npm run bench)", async () => {
    const root = tempDir("storeapi-bench-data-");
    const sizes = { orders: 20, products: 10, customers: 10, smallStores: 3 };
    const data = await ensureBenchData(root, sizes);
    expect(existsSync(join(data.dir, "manifest.json"))).toBe(true);
    const platform = await Platform.open(data.dir);
    try {
      expect((await platform.listStores()).length).toBe(4);
    } finally {
      await platform.close();
    }
  }, 60_000);
});

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
