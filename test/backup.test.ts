import { afterAll, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { backup } from "../src/cli/backup";
import { platformMigrations } from "../src/db/migrations";
import { loadFixture } from "../src/load/load";
import { otherStore, send, tempDir, testStore, until, withoutProgress } from "./helpers";
import { isOneCleanLine, runCli, spawnServer, storeapiCommand } from "./process";
import { TEST_LIBSQL, testLocation } from "./sqld";

const dir = tempDir("storeapi-backup-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Written {
  host: string;
  id: number;
  name: string;
}

/** Creates products in both stores, one after another per store, until `stop()`; records every acknowledged one. */
function writeLoad(url: string) {
  const acknowledged: Written[] = [];
  let running = true;
  let n = 0;
  const writer = async (host: string) => {
    while (running) {
      const name = `product ${++n}`;
      const answer = await send(url, "/api/v1/products", {
        method: "POST",
        host,
        body: { name, price: 1 },
      });
      if (answer.status !== 201) {
        running = false;
        throw new Error(`write refused: ${answer.status} ${answer.text}`);
      }
      acknowledged.push({ host, id: answer.json.data.id, name });
    }
  };
  const done = Promise.all([writer("shop1.test"), writer("shop2.test")]);
  done.catch(() => {}); // surfaced by stop()
  return {
    acknowledged,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

// Serves the backup as files beside a server on sqld; test/libsql.test.ts serves a server's backup.
test.skipIf(TEST_LIBSQL)(
  "a backup taken during a write load is a valid data directory with every write acknowledged before it began",
  async () => {
    const data = join(dir, "data");
    await loadFixture(await testLocation(data), {
      stores: [testStore(), otherStore({ keys: testStore().keys })],
    });
    const server = await spawnServer(data, ["--rate-limit", "1000000"]);
    const load = writeLoad(server.url);
    try {
      for (let i = 0; i < 1500 && load.acknowledged.length < 50; i++) await Bun.sleep(20);
      const before = [...load.acknowledged];
      const dest = join(dir, "copy");
      const run = await runCli(["backup", dest, "--data", data, "--json"]);
      await load.stop();
      expect(load.acknowledged.length).toBeGreaterThan(before.length); // writes went on during the backup
      // Nothing but progress, which a backup that runs past a second prints.
      expect(withoutProgress(run.stderr)).toBe("");
      expect(run.code).toBe(0);
      expect(run.json).toMatchObject({ dest, stores: 2 });
      expect(run.json.bytes).toBeGreaterThan(0);

      const copy = await spawnServer(dest);
      try {
        for (const product of before) {
          const answer = await send(copy.url, `/api/v1/products/${product.id}`, {
            host: product.host,
          });
          expect(`${product.host} ${product.id} ${answer.status} ${answer.json?.data?.name}`).toBe(
            `${product.host} ${product.id} 200 ${product.name}`,
          );
        }
      } finally {
        await copy.signal("SIGTERM");
      }
    } finally {
      await load.stop();
      await server.signal("SIGTERM");
    }
  },
  60_000,
);

// A backup inside the data directory went ahead (and was lost with it). Files only.
test.skipIf(TEST_LIBSQL)(
  "backup refuses the data directory itself or a directory inside it, symbolic links followed",
  async () => {
    const data = join(dir, "data-inside");
    await loadFixture(await testLocation(data), { stores: [testStore()] });
    symlinkSync(data, join(dir, "data-link"));
    const cases = [
      [data, "is the data directory"],
      [join(data, "stores", "copy"), `is inside the data directory ${data}`],
      [join(dir, "data-link", "copy"), `is inside the data directory ${data}`],
    ];
    for (const [dest, where] of cases) {
      const refused = await runCli(["backup", dest, "--data", data]);
      expect([refused.code, refused.stderr]).toEqual([
        1,
        `storeapi: ${dest} ${where}: a backup there is lost with it; back up to another directory, ideally another disk\n`,
      ]);
    }
    expect(readdirSync(join(data, "stores")).sort()).toEqual(["shop1.db"]);
  },
  60_000,
);

// Refuses a directory with no platform.db: on a server there is no directory to check.
test.skipIf(TEST_LIBSQL)(
  "backup prints a summary line, and refuses a destination that is not empty or a directory that is not a data directory",
  async () => {
    const data = join(dir, "data2");
    await loadFixture(await testLocation(data), { stores: [testStore()] });
    const ok = await runCli(["backup", join(dir, "copy2"), "--data", data]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      new RegExp(
        `^backed up platform\\.db and 1 stores \\([0-9.]+ MiB\\) into ${join(dir, "copy2")} in [0-9.]+ s\\n$`,
      ),
    );

    const full = join(dir, "full");
    mkdirSync(full);
    writeFileSync(join(full, "keep.txt"), "x");
    const refused = await runCli(["backup", full, "--data", data]);
    expect(refused.code).toBe(1);
    expect(isOneCleanLine(refused.stderr)).toBe(true);
    expect(refused.stderr).toBe(
      `storeapi: ${full} is not empty: back up into a new or empty directory\n`,
    );

    const notData = await runCli([
      "backup",
      join(dir, "copy3"),
      "--data",
      join(dir, "nothing-here"),
    ]);
    expect(notData.code).toBe(1);
    expect(notData.stderr).toBe(
      `storeapi: ${join(dir, "nothing-here")} is not a storeapi data directory (no platform.db)\n`,
    );

    // An empty platform.db is no registry either, and the backup leaves it as it is.
    const emptyDir = join(dir, "empty-registry");
    mkdirSync(emptyDir);
    writeFileSync(join(emptyDir, "platform.db"), "");
    const empty = await runCli(["backup", join(dir, "copy4"), "--data", emptyDir]);
    expect([empty.code, empty.stderr]).toEqual([
      1,
      `storeapi: ${emptyDir} is not a storeapi data directory (its platform.db is empty)\n`,
    ]);
    expect(readdirSync(emptyDir)).toEqual(["platform.db"]);

    const missing = await runCli(["backup", "--data", data]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("storeapi: missing DEST_DIR; usage: storeapi backup DEST_DIR\n");
  },
  120_000,
);

test("backing up many stores shows progress on stderr and keeps stdout for the summary", async () => {
  const data = join(dir, "many");
  const stores = Array.from({ length: 50 }, (_, i) =>
    testStore({ slug: `s${i}`, domain: `s${i}.test`, ownerEmail: `owner@s${i}.test`, keys: [] }),
  );
  await loadFixture(await testLocation(data), { stores });
  const run = await runCli(["backup", join(dir, "many-copy"), "--data", data, "--json"]);
  expect(run.code).toBe(0);
  expect(run.json.stores).toBe(50);
  expect(run.stderr.split("\n").at(-2)).toBe("backup: stores copied: 50/50");
}, 120_000);

// The copy is a data directory of files whatever the source; the source here is files too.
test.skipIf(TEST_LIBSQL)(
  "a backup cut short (kill -9) is no data directory: serve and the commands refuse it in one line",
  async () => {
    const data = join(dir, "cut-short");
    const stores = Array.from({ length: 200 }, (_, i) =>
      testStore({ slug: `c${i}`, domain: `c${i}.test`, ownerEmail: `owner@c${i}.test`, keys: [] }),
    );
    await loadFixture(await testLocation(data), { stores });
    const dest = join(dir, "cut-short-copy");
    const backup = Bun.spawn([...storeapiCommand(), "backup", dest, "--data", data], {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
      timeout: 60_000,
    });
    const copied = () =>
      existsSync(join(dest, "stores")) ? readdirSync(join(dest, "stores")).length : 0;
    expect(await until(() => copied() >= 5 || backup.exitCode !== null)).toBe(true);
    backup.kill("SIGKILL");
    expect(await backup.exited).not.toBe(0); // killed, not finished: 200 stores take seconds
    // (and platform.db's -wal and -shm with @libsql/client, killed before it closed the file)
    expect(readdirSync(dest)).toContain("BACKUP-UNFINISHED");

    const refusal = `storeapi: ${dest} is a backup that did not finish (BACKUP-UNFINISHED is there); take the backup again, into a new or empty directory\n`;
    for (const command of [
      ["stores", "list"],
      ["serve", "--listen", "127.0.0.1:0", "--allow-http"],
    ]) {
      const ran = await runCli([...command, "--data", dest]);
      expect([command[0], ran.code, ran.stderr]).toEqual([command[0], 1, refusal]);
    }
    expect(readdirSync(dest)).not.toContain("serve.lock"); // refused before anything was made
    const again = await runCli(["backup", dest, "--data", data]);
    expect([again.code, again.stderr]).toEqual([
      1,
      `storeapi: ${dest} holds a backup that did not finish (BACKUP-UNFINISHED is there): remove it and back up again, or back up into a new or empty directory\n`,
    ]);

    // Stopped by a signal (a timer's systemctl stop, Ctrl-C), it empties its copy, as a failure does.
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const stoppedDest = join(dir, `stopped-${signal}`);
      const stopped = Bun.spawn([...storeapiCommand(), "backup", stoppedDest, "--data", data], {
        stdin: "ignore",
        stdout: "ignore",
        stderr: "pipe",
        timeout: 60_000,
      });
      const copiedThere = () =>
        existsSync(join(stoppedDest, "stores"))
          ? readdirSync(join(stoppedDest, "stores")).length
          : 0;
      expect(await until(() => copiedThere() >= 5 || stopped.exitCode !== null)).toBe(true);
      stopped.kill(signal);
      expect([signal, await stopped.exited]).toEqual([signal, signal === "SIGINT" ? 130 : 143]);
      expect(await new Response(stopped.stderr).text()).toEndWith(
        `\nstoreapi: backup stopped by ${signal}; ${stoppedDest} emptied\n`, // after its progress
      );
      expect(readdirSync(stoppedDest)).toEqual([]);
    }
  },
  60_000,
);

// Deletes a store the way a server does (unregistered, its file moved away); on files.
test.skipIf(TEST_LIBSQL)(
  "a store deleted while the backup runs is left out of it, and no empty file is made in its place",
  async () => {
    const data = join(dir, "deleting");
    const stores = ["s0", "s1", "s2"].map((slug) =>
      testStore({ slug, domain: `${slug}.test`, ownerEmail: `owner@${slug}.test`, keys: [] }),
    );
    await loadFixture(await testLocation(data), { stores });
    const dest = join(dir, "deleting-copy");
    const { Database: Sqlite } = await import("bun:sqlite");
    const deleteS2 = () => {
      const platform = new Sqlite(join(data, "platform.db"));
      platform.run("DELETE FROM stores WHERE slug = 's2'");
      platform.close();
      renameSync(join(data, "stores", "s2.db"), join(dir, "s2-archived.db"));
    };
    // After s0 is copied (the registry copy already lists s2).
    const summary = await backup(data, dest, (done) => done === 1 && deleteS2());
    expect(summary.stores).toBe(2);
    expect(readdirSync(join(dest, "stores")).sort()).toEqual(["s0.db", "s1.db"]);
    const listed = await runCli(["stores", "list", "--json", "--data", dest]);
    expect(listed.json.map((store: { slug: string }) => store.slug)).toEqual(["s0", "s1"]);
    expect(existsSync(join(data, "stores", "s2.db"))).toBe(false);

    // Unregistered with its database left where it was, as a libSQL server keeps a deleted
    // store's namespace: left out too (it was copied, and came back with the backup).
    const dest2 = join(dir, "deleting-copy-2");
    const unregisterS1 = () => {
      const platform = new Database(join(data, "platform.db"));
      platform.exec("DELETE FROM stores WHERE slug = 's1'");
      platform.close();
    };
    const second = await backup(data, dest2, (done) => done === 1 && unregisterS1());
    expect([second.stores, readdirSync(join(dest2, "stores"))]).toEqual([1, ["s0.db"]]);
  },
);

/** The schema version a database file records. */
function versionOf(path: string): number {
  const db = new Database(path, { readonly: true });
  const { user_version } = db.prepare("PRAGMA user_version").get() as { user_version: number };
  db.close();
  return user_version;
}

// Turns the files back into an older storeapi's: the newest migration undone.
test.skipIf(TEST_LIBSQL)(
  "a backup upgrades nothing: an older store is copied as it is, an older platform.db is refused",
  async () => {
    const data = join(dir, "older");
    await loadFixture(data, { stores: [testStore(), otherStore()] });
    const shop1 = join(data, "stores", "shop1.db");
    const store = new Database(shop1);
    store.exec("DROP TABLE meta; PRAGMA user_version = 4"); // store schema 5 made `meta`
    store.close();
    const copied = await runCli(["backup", join(dir, "older-copy"), "--data", data]);
    expect(copied.code).toBe(0);
    // An upgraded server's idle store: what it was, in the data directory and in the backup.
    expect(versionOf(shop1)).toBe(4);
    expect(versionOf(join(dir, "older-copy", "stores", "shop1.db"))).toBe(4);
    expect(versionOf(join(dir, "older-copy", "stores", "shop2.db"))).toBe(5);

    const platformDb = join(data, "platform.db");
    const platform = new Database(platformDb);
    platform.exec("DELETE FROM meta WHERE key = 'registry'; PRAGMA user_version = 5");
    platform.close();
    const dest = join(dir, "older-refused");
    const refused = await runCli(["backup", dest, "--data", data]);
    expect([refused.code, refused.stderr]).toEqual([
      1,
      `storeapi: ${platformDb} has schema version 5, older than this storeapi's ${platformMigrations.at(-1)?.version}: back up with the storeapi that serves it (this one would upgrade the data directory, and the backup could not be restored for the older one)\n`,
    ]);
    expect(versionOf(platformDb)).toBe(5);
    expect(existsSync(dest)).toBe(false);
  },
);
