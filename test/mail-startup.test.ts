import { afterAll, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadFixture } from "../src/load/load";
import { tempDir, testStore } from "./helpers";
import { eventually } from "./mail-support";
import { runCli, type ServerProcess, spawnServer } from "./process";
import { testLocation } from "./sqld";

const dataDir = tempDir("storeapi-mail-start-");
const mailDir = join(dataDir, "mail");
let server: ServerProcess | undefined;

afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dataDir, { recursive: true, force: true });
});

const scanLine = (stdout: string) =>
  stdout
    .split("\n")
    .filter((line) => line.includes('"mail: start-up scan done"'))
    .map((line) => JSON.parse(line) as { storesScanned: number; storesOpened: number });

test("mail queued in one of 40 stores while no server ran is delivered at start, opening only that store", async () => {
  const stores = Array.from({ length: 40 }, (_, i) =>
    testStore({ slug: `s${i}`, domain: `s${i}.test`, keys: [] }),
  );
  await loadFixture(await testLocation(dataDir), { stores });
  const created = await runCli(
    ["keys", "create", "s17", "--name", "deploy", "--orders", "read", "--data", dataDir],
    { underTest: true },
  );
  expect(created.code).toBe(0);

  server = await spawnServer(dataDir, ["--mail-dir", mailDir]);
  const files = await eventually(() => {
    try {
      const names = readdirSync(mailDir);
      return names.length ? names : undefined;
    } catch {
      return undefined;
    }
  });
  expect(files).toHaveLength(1);
  const [scan] = await eventually(() =>
    scanLine(server!.stdout()).length ? scanLine(server!.stdout()) : undefined,
  );
  expect(scan).toMatchObject({ storesScanned: 1, storesOpened: 1 });

  // A clean stop clears the marker: the next start looks at no outbox.
  expect(await server.signal("SIGTERM")).toBe(0);
  server = await spawnServer(dataDir, ["--mail-dir", mailDir]);
  const [again] = await eventually(() =>
    scanLine(server!.stdout()).length ? scanLine(server!.stdout()) : undefined,
  );
  expect(again).toMatchObject({ storesScanned: 0, storesOpened: 0 });
}, 60_000);
