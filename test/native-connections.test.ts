import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { storeMigrations } from "../src/db/migrations";
import { NativeDb } from "../src/db/native";
import { openDb } from "../src/db/open";
import { tempDir } from "./helpers";

const dir = tempDir("storeapi-native-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.skipIf(process.env.STOREAPI_DRIVER === "client")(
  "a store only read and updated statement by statement holds one connection; a transaction opens the second",
  async () => {
    const db = (await openDb(`file:${join(dir, "s.db")}`, storeMigrations)) as NativeDb;
    await db.close();
    const reopened = new NativeDb(join(dir, "s.db"));
    try {
      await reopened.get("SELECT count(*) AS n FROM orders");
      await reopened.run("UPDATE api_keys SET last_used_at = ? WHERE id = ?", [1, 1]);
      await reopened.exec("UPDATE api_keys SET last_used_at = 2 WHERE id = 1");
      expect(reopened.connections).toBe(1);
      await reopened.transaction((tx) =>
        tx.run("UPDATE api_keys SET last_used_at = 3 WHERE id = 1"),
      );
      expect(reopened.connections).toBe(2);
    } finally {
      await reopened.close();
    }
  },
);
