import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

// Bun ignores bunfig.toml's `[test] timeout`, and a preload's setDefaultTimeout holds for
// one file only; only the command line sets every test's default. Black-box tests start
// real servers on a shared machine and may take longer than Bun's own 5 s default.
test("npm test (and .ci/run) give every test 60 s: the test script passes --timeout", () => {
  const { scripts } = JSON.parse(readFileSync(join(import.meta.dir, "..", "package.json"), "utf8"));
  const timeout = /(?:^|\s)--timeout[ =](\d+)(?:\s|$)/.exec(scripts.test)?.[1];
  expect(scripts.test).toStartWith("bun test ");
  expect(Number(timeout)).toBeGreaterThanOrEqual(60_000);
});
