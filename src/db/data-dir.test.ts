import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeDataDirPrivate } from "./data-dir";

const dir = mkdtempSync(join(tmpdir(), "storeapi-data-dir-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a server's start tightens modes even while a command beside it removes a store's -wal and -shm", async () => {
  const stores = join(dir, "stores");
  mkdirSync(stores, { mode: 0o755 });
  writeFileSync(join(stores, "shop1.db"), "", { mode: 0o644 });
  // Another process makes and removes WAL files as fast as it can, as stores close.
  const churn = Bun.spawn(
    [
      process.execPath,
      "-e",
      `const fs = require("node:fs"); const end = Date.now() + 4000;
       for (let i = 0; Date.now() < end; i++) { const f = ${JSON.stringify(stores)} + "/s" + (i % 8) + ".db-wal"; fs.writeFileSync(f, ""); fs.rmSync(f); }`,
    ],
    { stdout: "ignore", stderr: "inherit" },
  );
  try {
    for (let i = 0; i < 3000 && churn.exitCode === null; i++) makeDataDirPrivate(dir);
  } finally {
    churn.kill();
    await churn.exited;
  }
  expect(statSync(stores).mode & 0o777).toBe(0o700);
  expect(statSync(join(stores, "shop1.db")).mode & 0o777).toBe(0o600);
});
