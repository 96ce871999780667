import type { Subprocess } from "bun";
import { join } from "node:path";
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
export const serverRunsOnDeno = (): boolean => (process.env.STOREAPI_BIN ?? "").endsWith("storeapi-deno");

/** Runs a CLI command to completion. */
export async function runCli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([...storeapiCommand(), ...args, ...(await libsqlFlagsFor(args))], {
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
    env: { ...process.env, ...env },
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/**
 * Starts `storeapi serve` as its own process on a free loopback port and waits for its
 * "listening" log line (bounded: fails after 30 s, room for a loaded machine). Plain HTTP
 * is allowed unless told not.
 */
export async function spawnServer(
  dataDir: string,
  flags: string[] = [],
  env: Record<string, string> = {},
  { allowHttp = true } = {},
): Promise<ServerProcess> {
  const libsql = TEST_LIBSQL ? (await sqldFor(dataDir)).flags : [];
  const proc = Bun.spawn(
    [...storeapiCommand(), "serve", "--data", dataDir, "--listen", "127.0.0.1:0", ...(allowHttp ? ["--allow-http"] : []), "--log-level", "info", ...libsql, ...flags],
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
    if (chunk.done) throw new Error(`server exited before listening: ${buffered} ${await new Response(proc.stderr).text()}`);
    buffered += decoder.decode(chunk.value);
    pending = reader.read();
    for (const line of buffered.split("\n")) {
      if (line.includes('"listening"')) url = JSON.parse(line).url;
    }
  }
  // Keep draining stdout so the server never blocks on a full pipe.
  (async () => {
    for (let chunk = await pending; !chunk.done; chunk = await reader.read()) buffered += decoder.decode(chunk.value);
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
 * Starts `storeapi ARGS` and reads its stdout until `until` appears (or it ends); killed
 * after 60 s. `rest()` reads on to the end (signal the process first).
 */
export async function spawnUntil(args: string[], until: string) {
  const child = Bun.spawn([...storeapiCommand(), ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 60_000 });
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
  await readUntil(() => text.includes(until));
  const head = text;
  return { child, text: head, rest: async () => (await readUntil(() => false), text.slice(head.length)) };
}
