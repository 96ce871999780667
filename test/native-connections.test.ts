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
  "a store read, updated and written in transactions holds one connection",
  async () => {
    const db = (await openDb(`file:${join(dir, "s.db")}`, storeMigrations)) as NativeDb;
    await db.close();
    const reopened = new NativeDb(join(dir, "s.db"));
    try {
      await reopened.get("SELECT count(*) AS n FROM orders");
      await reopened.run("UPDATE api_keys SET last_used_at = ? WHERE id = ?", [1, 1]);
      await reopened.exec("UPDATE api_keys SET last_used_at = 2 WHERE id = 1");
      await reopened.transaction((tx) =>
        tx.run("UPDATE api_keys SET last_used_at = 3 WHERE id = 1"),
      );
      expect(reopened.connections).toBe(1);
    } finally {
      await reopened.close();
    }
  },
);

test.skipIf(process.env.STOREAPI_DRIVER === "client")(
  "a read while a transaction is open takes a second connection and sees only committed rows",
  async () => {
    const db = (await openDb(`file:${join(dir, "t.db")}`, storeMigrations)) as NativeDb;
    try {
      const count = async () =>
        (await db.get<{ n: number }>("SELECT count(*) AS n FROM order_statuses"))?.n;
      const before = await count();
      const seen: (number | undefined)[] = [];
      await db.transaction(async (tx) => {
        await tx.run("INSERT INTO order_statuses (id, name) VALUES (900, 'Held')");
        seen.push(await count());
        seen.push((await tx.get<{ n: number }>("SELECT count(*) AS n FROM order_statuses"))?.n);
      });
      expect(seen).toEqual([before, (before ?? 0) + 1]);
      expect(db.connections).toBe(2);
      expect(await count()).toBe((before ?? 0) + 1);
    } finally {
      await db.close();
    }
  },
);
