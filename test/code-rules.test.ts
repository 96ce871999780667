import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const SRC = join(import.meta.dir, "..", "src");

const sources = (readdirSync(SRC, { recursive: true }) as string[]).filter(
  (f) => /\.tsx?$/.test(f) && !f.endsWith(".test.ts"),
);

// src/http/context.ts says why: Hono's `c.var` builds a new object from every variable on each access.
test("request variables are read with c.get, never c.var", () => {
  const offenders = sources.filter((f) =>
    /\bc\.var\b/.test(readFileSync(join(SRC, f), "utf8").replace(/^\s*\*.*$/gm, "")),
  );
  expect(offenders).toEqual([]);
});
