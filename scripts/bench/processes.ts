/**
 * Child processes of the bench: the server under test and the anchors, pinned to the
 * server core, always killed when the bench ends (normally, on a signal or on its deadline).
 */
import { openSync, readdirSync } from "node:fs";
import type { Subprocess } from "bun";

const children = new Set<Subprocess>();

export function killAll(): void {
  for (const child of children) child.kill("SIGKILL");
  children.clear();
}

export interface Spawned {
  child: Subprocess;
  pid: number;
  startedAt: number;
}

/** Spawns `command` on `cpu` (via taskset) with its output appended to `logFile`. */
export function spawnPinned(
  command: string[],
  cpu: string | null,
  logFile: string,
  env: Record<string, string> = {},
): Spawned {
  const out = openSync(logFile, "a");
  const startedAt = performance.now();
  const child = Bun.spawn(cpu === null ? command : ["taskset", "-c", cpu, ...command], {
    stdout: out,
    stderr: out,
    stdin: "ignore",
    env: { ...process.env, ...env },
  });
  children.add(child);
  child.exited.then(() => children.delete(child));
  return { child, pid: child.pid, startedAt };
}

export async function stop(spawned: Spawned): Promise<void> {
  spawned.child.kill("SIGTERM");
  const exited = await Promise.race([
    spawned.child.exited.then(() => true),
    Bun.sleep(10_000).then(() => false),
  ]);
  if (!exited) spawned.child.kill("SIGKILL");
  await spawned.child.exited;
}

/** Polls `url` until it answers 200; returns ms from the spawn to that answer. */
export async function waitFor200(
  url: string,
  spawned: Spawned,
  timeoutMs = 60_000,
): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (spawned.child.exitCode !== null)
      throw new Error(`${url}: the process exited with ${spawned.child.exitCode} before answering`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - spawned.startedAt;
    } catch {
      // not listening yet
    }
    await Bun.sleep(1);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

/**
 * `count` different ports free on 127.0.0.1 right now: each is held until all are picked
 * (so no two are the same), then released for the caller's process to bind a moment later.
 */
export function freePorts(count: number): number[] {
  const held = Array.from({ length: count }, () =>
    Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }),
  );
  for (const server of held) server.stop(true);
  return held.map((server) => server.port);
}

/** A port free on 127.0.0.1 right now. */
export function freePort(): number {
  return freePorts(1)[0];
}

/** Resident memory of a process in MB from /proc/PID/status (VmRSS, peak VmHWM), and its open files. */
export async function memoryOf(
  pid: number,
): Promise<{ rssMb: number; peakMb: number; openFiles: number }> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  const kb = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  let openFiles = Number.NaN;
  try {
    openFiles = readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    // not Linux
  }
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024, openFiles };
}

/** CPU time (user + system) a process has used, in clock ticks, from /proc/PID/stat. */
async function cpuTicks(pid: number): Promise<number> {
  const stat = await Bun.file(`/proc/${pid}/stat`).text();
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
}

/**
 * Waits until a process has been nearly idle (< 5% of a core) for one second, at most
 * `timeoutMs`: the server's start-up work (its scan of every store's outbox) must not
 * overlap the measurements. Returns the ms waited, or NaN when /proc is not there.
 */
export async function waitUntilIdle(pid: number, timeoutMs = 90_000): Promise<number> {
  const started = performance.now();
  const TICKS_PER_SECOND = 100;
  try {
    let last = await cpuTicks(pid);
    while (performance.now() - started < timeoutMs) {
      await Bun.sleep(1000);
      const now = await cpuTicks(pid);
      if (now - last < 0.05 * TICKS_PER_SECOND) return performance.now() - started;
      last = now;
    }
  } catch {
    return Number.NaN;
  }
  return performance.now() - started;
}
