import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KEYS, otherStore, send, tempDir, testStore, until } from "../helpers";
import { runCli, type ServerProcess, spawnServer } from "../process";
import { TEST_LIBSQL } from "../sqld";

/**
 * One store's file that cannot be written (a read-only mount of it here; an immutable file
 * or a mode the server's user cannot change behaves the same): the server starts, that
 * store refuses writes with 503 naming its file, and the others go on. Mounting needs
 * root; elsewhere this is skipped.
 */

const dir = tempDir("storeapi-read-only-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(command: string[]): Promise<boolean> {
  const proc = Bun.spawn(command, { stdout: "ignore", stderr: "ignore" });
  return (await proc.exited) === 0;
}

/** Makes `file` read-only by bind-mounting it over itself. */
const mountReadOnly = async (file: string) =>
  (await run(["mount", "--bind", file, file])) &&
  (await run(["mount", "-o", "remount,bind,ro", file]));
const unmount = (file: string) => run(["umount", "--lazy", file]);

const probe = join(dir, "probe");
writeFileSync(probe, "");
const canMount = !TEST_LIBSQL && (await mountReadOnly(probe)) && (await unmount(probe));

describe.skipIf(!canMount)("a store file that cannot be written", () => {
  test("its writes are 503 naming the file; the server starts and the other stores go on", async () => {
    const data = join(dir, "data");
    const fixture = join(dir, "fixture.json");
    writeFileSync(fixture, JSON.stringify({ stores: [testStore(), otherStore()] }));
    expect((await runCli(["load", fixture, "--data", data])).code).toBe(0);
    const file = join(data, "stores", "shop2.db");
    expect(await mountReadOnly(file)).toBe(true);
    let server: ServerProcess | undefined;
    try {
      // Before, serve's chmod of every file met EROFS and the server did not start.
      const running = await spawnServer(data);
      server = running;
      const product = (name: string) =>
        send(running.url, "/api/v1/products", {
          method: "POST",
          host: "shop2.test",
          key: KEYS.other,
          body: { name, price: 1 },
        });
      const refused = await product("refused");
      expect([refused.status, refused.json.error.code]).toEqual([503, "store_unavailable"]);
      const read = await send(running.url, "/api/v1/products", {
        host: "shop2.test",
        key: KEYS.other,
      });
      expect(read.status).toBe(200);
      expect(
        (
          await send(running.url, "/api/v1/products", {
            method: "POST",
            body: { name: "p", price: 1 },
          })
        ).status,
      ).toBe(201); // shop1
      expect(
        await until(() =>
          running
            .stdout()
            .split("\n")
            .some(
              (line) =>
                line.includes("request failed") && line.includes(`${file} cannot be opened`),
            ),
        ),
      ).toBe(true);
    } finally {
      await server?.signal("SIGTERM");
      await unmount(file);
    }
  });
});
