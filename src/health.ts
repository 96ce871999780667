import { unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "libsql";
import type { Queryable } from "./db/driver";
import { ApiError } from "./errors";
import type { ReportError } from "./log";

/**
 * What `/healthz` reports, found off the request path: a probe every `intervalMs` reads
 * the platform database through a fresh connection (so a file that was deleted, replaced
 * or corrupted on disk shows, not the server's cached pages) and writes a file in the data
 * directory. Requests only read the last finding, so a stuck disk never blocks them.
 * On a libSQL server (`platform` given) it reads the registry there instead: every query
 * is a fresh request, and there is no directory of ours to write.
 */
export class HealthProbe {
  private finding: ApiError | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;
  private probing = false;

  constructor(
    private readonly dataDir: string,
    private readonly reportError: ReportError,
    private readonly platform: Queryable | null = null,
  ) {}

  /** The last probe's problem, or null when the server is healthy. */
  get problem(): ApiError | null {
    return this.finding;
  }

  async start(intervalMs = 1000): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => void this.probe(), intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async probe(): Promise<void> {
    if (this.probing) return; // the last probe is still waiting on the disk
    this.probing = true;
    try {
      const problems: string[] = [];
      let cause: unknown;
      for (const [problem, check] of this.checks()) {
        try {
          await check();
        } catch (error) {
          problems.push(problem);
          cause ??= error;
        }
      }
      const message = problems.length ? `Unhealthy: ${problems.join("; ")}.` : null;
      // Logged once when it starts (or changes), with the cause; the answer itself names no path or errno.
      if (message && message !== this.finding?.message)
        this.reportError(`health check failed: ${problems.join("; ")}`, cause);
      this.finding = message ? new ApiError("service_unavailable", message) : null;
    } finally {
      this.probing = false;
    }
  }

  private checks(): [string, () => unknown][] {
    const platform = this.platform;
    if (platform)
      return [
        ["the libSQL server cannot be read", () => platform.get("SELECT count(*) FROM stores")],
      ];
    return [
      ["the platform database cannot be read", () => this.readPlatform()],
      ["the data directory is not writable", () => this.writeDataDir()],
    ];
  }

  private readPlatform(): void {
    // exec, not prepare: the binding frees a connection's descriptors at close only when no statement holds them.
    const db = new Database(join(this.dataDir, "platform.db"), {
      readonly: true,
      fileMustExist: true,
    });
    try {
      db.exec("SELECT count(*) FROM stores");
    } finally {
      db.close();
    }
  }

  private async writeDataDir(): Promise<void> {
    const path = join(this.dataDir, ".healthz-probe");
    await writeFile(path, `${Date.now()}\n`);
    await unlink(path);
  }
}
