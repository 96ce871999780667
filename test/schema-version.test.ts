import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { tempDir } from "./helpers";
import { isOneCleanLine, runCli } from "./process";
import { TEST_LIBSQL } from "./sqld";

const dir = tempDir("storeapi-schema-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const data = join(dir, "data");

function setUserVersion(path: string, version: number): void {
  const db = new Database(path);
  db.exec(`PRAGMA user_version = ${version}`);
  db.close();
}

// Writes a newer schema version into the files.
test.skipIf(TEST_LIBSQL)(
  "a database written by a newer storeapi is refused with one line, for the CLI and serve",
  async () => {
    const added = await runCli([
      "stores",
      "add",
      "shop1",
      "--domain",
      "shop1.test",
      "--plan",
      "growth",
      "--owner-email",
      "o@shop1.test",
      "--data",
      data,
    ]);
    expect(added.code).toBe(0);
    setUserVersion(join(data, "platform.db"), 999);

    for (const args of [
      ["stores", "list"],
      ["serve", "--listen", "127.0.0.1:0", "--allow-http"],
    ]) {
      const run = await runCli([...args, "--data", data], { timeoutMs: 30_000 });
      expect(run.code).toBe(1);
      expect(isOneCleanLine(run.stderr)).toBe(true);
      expect(run.stderr).toContain(
        `${join(data, "platform.db")}: this database has schema version 999 but this storeapi knows versions up to`,
      );
    }
  },
);
