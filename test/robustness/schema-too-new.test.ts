import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { storeMigrations } from "../../src/db/migrations";
import { KEYS, otherStore, send, tempDir, testStore, until } from "../helpers";
import { manage, newHostKey } from "../manage-support";
import { runCli, type ServerProcess, spawnServer } from "../process";
import { TEST_LIBSQL } from "../sqld";

/**
 * One store's database written by a newer storeapi (a binary rolled back after a release
 * that changed only the stores' schema, or one store restored from a newer backup): that
 * store answers 503 `store_unavailable` and the log names its file and why, the others go
 * on, and this binary writes nothing to it. It answered 500 `server_error` before, while
 * a too-new platform.db was refused at start. Files only.
 */
describe.skipIf(TEST_LIBSQL)("a store database newer than this storeapi", () => {
  let [dir, data, shop2] = ["", "", ""];
  let server: ServerProcess | undefined;
  const tooNew = storeMigrations.length + 4;
  const refusal = () =>
    `${shop2}: this database has schema version ${tooNew} but this storeapi knows versions up to ${storeMigrations.length}: ` +
    "it was written by a newer storeapi; run that version (or restore a backup taken before the upgrade)";

  beforeAll(async () => {
    dir = tempDir("storeapi-too-new-");
    data = join(dir, "data");
    const fixture = join(dir, "fixture.json");
    writeFileSync(fixture, JSON.stringify({ stores: [testStore(), otherStore()] }));
    const loaded = await runCli(["load", fixture, "--data", data]);
    expect([loaded.code, loaded.stderr]).toEqual([0, ""]);
    shop2 = join(data, "stores", "shop2.db");
    const db = new Database(shop2);
    db.run(`PRAGMA user_version = ${tooNew}`);
    db.close();
    server = await spawnServer(data);
  });

  afterAll(async () => {
    await server?.signal("SIGTERM");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("its requests answer 503 and the log says why; the other store and the management API go on", async () => {
    const url = (server as ServerProcess).url;
    const refused = await send(url, "/api/v1/products", { host: "shop2.test", key: KEYS.other });
    expect([refused.status, refused.json.error.code]).toEqual([503, "store_unavailable"]);
    const served = await send(url, "/api/v1/products", { host: "shop1.test", key: KEYS.all });
    expect(served.status).toBe(200);
    const errors = () =>
      (server as ServerProcess)
        .stdout()
        .split("\n")
        .filter((line) => line.includes('"level":"error"'))
        .map((line) => JSON.parse(line).error);
    await until(() => errors().length > 0);
    expect(errors()).toEqual([refusal()]);

    const hostKey = await newHostKey(data);
    let stores = await manage(url, "GET", "/stores", { key: hostKey });
    for (let i = 0; i < 50 && stores.status === 401; i++) {
      await Bun.sleep(100); // the server sees the new host key within a second
      stores = await manage(url, "GET", "/stores", { key: hostKey });
    }
    expect(
      stores.json.data.map((s: { slug: string; orderStatuses: unknown[] }) => [
        s.slug,
        s.orderStatuses.length,
      ]),
    ).toEqual([
      ["shop2", 0],
      ["shop1", 4],
    ]);
    expect((await manage(url, "GET", "/stores/shop2", { key: hostKey })).status).toBe(503);
  });

  test("a command on it says so in one line and leaves its schema as it is", async () => {
    const listed = await runCli(["keys", "list", "shop2", "--data", data]);
    expect([listed.code, listed.stdout, listed.stderr]).toEqual([
      1,
      "",
      `storeapi: ${refusal()}\n`,
    ]);
    const db = new Database(shop2, { readonly: true });
    expect(db.query("PRAGMA user_version").get()).toEqual({ user_version: tooNew });
    db.close();
  });
});
