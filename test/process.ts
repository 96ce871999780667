import { join } from "node:path";
import { format } from "node:util";
import type { Subprocess } from "bun";
import { libsqlFlagsFor, sqldFor, TEST_LIBSQL } from "./sqld";

const ROOT = join(import.meta.dir, "..");
const BUN = process.execPath;

export interface ServerProcess {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Sends a signal and waits for the exit status. */
  signal(signal: "SIGTERM" | "SIGKILL" | "SIGINT"): Promise<number>;
  stderr(): Promise<string>;
  /** Everything the server wrote to stdout so far (its JSON log lines). */
  stdout(): string;
}

/** The command that runs storeapi: the built binary when STOREAPI_BIN is set, else the sources. */
export function storeapiCommand(): string[] {
  const bin = process.env.STOREAPI_BIN;
  return bin ? [bin] : [BUN, join(ROOT, "src/main.ts")];
}

/** Whether the server under test runs on Deno (scripts/storeapi-deno): see the README on what differs. */
export const serverRunsOnDeno = (): boolean =>
  (process.env.STOREAPI_BIN ?? "").endsWith("storeapi-deno");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when it is not JSON). */
  json: any;
}

export interface CliOptions {
  env?: Record<string, string>;
  /** Killed after this long (default 60 s). */
  timeoutMs?: number;
  /** Run the command under test (STOREAPI_BIN when set) instead of src/main.ts on this bun. */
  underTest?: boolean;
}

function withJson(code: number, stdout: string, stderr: string): CliResult {
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

/**
 * Runs `storeapi ARGS` to completion as its own process: src/main.ts on the bun running the
 * tests (no build needed), or the command under test when asked. For what needs a process:
 * signals, a crash, the exit status the OS sees, a running server beside it.
 */
export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const command = options.underTest ? storeapiCommand() : [BUN, join(ROOT, "src/main.ts")];
  const proc = Bun.spawn([...command, ...args, ...(await libsqlFlagsFor(args))], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
    env: { ...process.env, ...options.env },
    timeout: options.timeoutMs ?? 60_000,
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return withJson(code, stdout, stderr);
}

let inProcessTurn: Promise<unknown> = Promise.resolve();

/**
 * Runs `storeapi ARGS` in this process through `main(argv)`, capturing what it writes: for
 * tests of the command line's logic (parsing, messages, exit codes), without a process start
 * each. One command at a time, as stdout, stderr and the environment are borrowed. Not for
 * serve or demo (they keep running), nor for anything that must crash the process.
 */
export function runCliInProcess(
  args: string[],
  options: Pick<CliOptions, "env"> = {},
): Promise<CliResult> {
  const run = inProcessTurn.then(() => captureMain(args, options.env ?? {}));
  inProcessTurn = run.catch(() => {});
  return run;
}

async function captureMain(args: string[], env: Record<string, string>): Promise<CliResult> {
  const { main } = await import("../src/program");
  const out: string[] = [];
  const err: string[] = [];
  const saved = {
    stdout: process.stdout.write,
    stderr: process.stderr.write,
    log: console.log,
    error: console.error,
  };
  const savedEnv = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  const sink = (into: string[]) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      into.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
      const done = rest.find((arg) => typeof arg === "function") as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = sink(out);
  process.stderr.write = sink(err);
  console.log = (...values: unknown[]) => out.push(`${format(...values)}\n`);
  console.error = (...values: unknown[]) => err.push(`${format(...values)}\n`);
  Object.assign(process.env, env);
  try {
    const code = await main(args);
    return withJson(code, out.join(""), err.join(""));
  } finally {
    process.stdout.write = saved.stdout;
    process.stderr.write = saved.stderr;
    console.log = saved.log;
    console.error = saved.error;
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** The rule for every failing command: exactly one line on stderr, no stack trace. */
export function isOneCleanLine(stderr: string): boolean {
  const lines = stderr.split("\n").filter((line) => line.length > 0);
  return lines.length === 1 && lines[0].startsWith("storeapi: ") && !/\n\s+at /.test(stderr);
}

/**
 * Starts `storeapi serve` as its own process on a free loopback port and waits for its
 * "listening" log line (bounded: fails after 30 s, room for a loaded machine). Plain HTTP
 * is allowed unless told not.
 */
/** `storeapi serve` on DATA_DIR at a free loopback port: the command line every spawned server starts from. */
export const serveCommand = (dataDir: string) => [
  ...storeapiCommand(),
  "serve",
  "--data",
  dataDir,
  "--listen",
  "127.0.0.1:0",
];

export async function spawnServer(
  dataDir: string,
  flags: string[] = [],
  env: Record<string, string> = {},
  { allowHttp = true, readLog = true } = {},
): Promise<ServerProcess> {
  const libsql = TEST_LIBSQL ? (await sqldFor(dataDir)).serveFlags : [];
  const proc = Bun.spawn(
    [
      ...serveCommand(dataDir),
      ...(allowHttp ? ["--allow-http"] : []),
      "--log-level",
      "info",
      ...libsql,
      ...flags,
    ],
    { stdout: "pipe", stderr: "pipe", stdin: "ignore", env: { ...process.env, ...env } },
  );
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  const deadline = Date.now() + 30_000;
  let url: string | undefined;
  let pending = reader.read();
  while (!url) {
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`server did not start: ${buffered}`);
    }
    const chunk = await Promise.race([pending, Bun.sleep(200).then(() => null)]);
    if (!chunk) continue;
    if (chunk.done)
      throw new Error(
        `server exited before listening: ${buffered} ${await new Response(proc.stderr).text()}`,
      );
    buffered += decoder.decode(chunk.value);
    pending = reader.read();
    for (const line of buffered.split("\n")) {
      if (line.includes('"listening"')) url = JSON.parse(line).url;
    }
  }
  // Keep draining stdout so the server never blocks on a full pipe (unless the test wants one).
  if (readLog)
    (async () => {
      for (let chunk = await pending; !chunk.done; chunk = await reader.read())
        buffered += decoder.decode(chunk.value);
    })().catch(() => {});
  return {
    url,
    proc,
    signal: async (signal) => {
      proc.kill(signal);
      return proc.exited;
    },
    stderr: () => new Response(proc.stderr).text(),
    stdout: () => buffered,
  };
}

/**
 * Starts `storeapi ARGS` and reads its stdout until `until` appears or holds (or it ends);
 * killed after 60 s. `rest()` reads on to the end (signal the process first).
 */
export async function spawnUntil(
  args: string[],
  until: string | ((text: string) => boolean),
  env: Record<string, string> = {},
) {
  const child = Bun.spawn([...storeapiCommand(), ...args], {
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const readUntil = async (done: () => boolean) => {
    while (!done()) {
      const chunk = await reader.read();
      if (chunk.done) return;
      text += decoder.decode(chunk.value);
    }
  };
  await readUntil(() => (typeof until === "string" ? text.includes(until) : until(text)));
  const head = text;
  return {
    child,
    text: head,
    rest: async () => {
      await readUntil(() => false);
      return text.slice(head.length);
    },
  };
}
