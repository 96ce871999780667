import { expect, test } from "bun:test";
import { progressPrinter } from "../src/cli/output";

/** Runs `steps` as [clock ms, done, total] through a printer made at 0 ms; what it wrote. */
function printed(from: number, steps: Array<[number, number, number, string?]>): string[] {
  const lines: string[] = [];
  let now = 0;
  const progress = progressPrinter(
    from,
    (line) => lines.push(line),
    () => now,
  );
  for (const [at, done, total, what = "copied"] of steps) {
    now = at;
    progress(what, done, total);
  }
  return lines;
}

test("many steps: the first, then at most one a second, and the last", () => {
  const steps: Array<[number, number, number]> = [
    [10, 1, 60],
    [500, 2, 60],
    [1200, 30, 60],
    [1300, 59, 60],
    [1400, 60, 60],
  ];
  expect(printed(50, steps)).toEqual(["copied: 1/60\n", "copied: 30/60\n", "copied: 60/60\n"]);
});

test("few steps done within a second say nothing", () => {
  expect(
    printed(50, [
      [300, 1, 3],
      [600, 2, 3],
      [999, 3, 3],
    ]),
  ).toEqual([]);
});

// migrate-to-libsql copied 20 big stores in 9 s without a line.
test("few steps that take longer than a second say so from then on", () => {
  const steps: Array<[number, number, number]> = [
    [450, 1, 20],
    [1400, 3, 20],
    [2000, 4, 20],
    [2500, 5, 20],
    [9300, 20, 20],
  ];
  expect(printed(50, steps)).toEqual(["copied: 3/20\n", "copied: 5/20\n", "copied: 20/20\n"]);
});

// A load of 30 tiny stores printed a line for each section once it passed a second in all.
test("each piece of work is judged on its own: many small ones say nothing, a slow one does", () => {
  const steps: Array<[number, number, number, string]> = [];
  for (let i = 0; i < 30; i++) steps.push([i * 100 + 50, 10, 10, `loading s${i} products`]);
  steps.push([3100, 1, 3, "loading big products"], [4500, 2, 3, "loading big products"]);
  steps.push([4600, 3, 3, "loading big products"]);
  expect(printed(10_000, steps)).toEqual([
    "loading big products: 2/3\n",
    "loading big products: 3/3\n",
  ]);
});

// 8 stores of 10,000 products printed a line each, 8 a second.
test("big pieces one after another: at most a line a second, each shown one ended", () => {
  const steps: Array<[number, number, number, string]> = [];
  for (let i = 0; i < 8; i++)
    steps.push([1000 + i * 150, 10_000, 10_000, `loading m${i} products`]);
  expect(printed(10_000, steps)).toEqual([
    "loading m0 products: 10000/10000\n",
    "loading m7 products: 10000/10000\n",
  ]);
});
