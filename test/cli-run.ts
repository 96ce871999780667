import { join, resolve } from "node:path";
import { libsqlFlagsFor } from "./sqld";

const ROOT = resolve(import.meta.dir, "..");
const MAIN = join(ROOT, "src/main.ts");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when it is not JSON). */
  // biome-ignore lint: test convenience
  json: any;
}

/**
 * Runs `storeapi ARGS` as a subprocess from the sources (the bun running the tests runs
 * src/main.ts: no build needed). Bounded: killed after `timeoutMs`.
 */
export async function storeapi(args: string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CliResult> {
  const child = Bun.spawn([process.execPath, MAIN, ...args, ...(await libsqlFlagsFor(args))], {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: options.timeoutMs ?? 60_000,
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

/** The rule for every failing command: exactly one line on stderr, no stack trace. */
export function isOneCleanLine(stderr: string): boolean {
  const lines = stderr.split("\n").filter((line) => line.length > 0);
  return lines.length === 1 && lines[0].startsWith("storeapi: ") && !/\n\s+at /.test(stderr);
}
