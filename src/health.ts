import { unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "libsql";
import type { Db } from "./db/driver";
import { PinnedFileDb } from "./db/pinned-file";
import { ApiError } from "./errors";
import { FILE_SYSTEM_REASONS, outOfDescriptors } from "./file-system";
import type { ReportError } from "./log";

/**
 * What `/healthz` reports, found off the request path: a probe every `intervalMs` reads
 * the platform database through a fresh connection (so a file that was deleted, replaced
 * or corrupted on disk shows, not the server's cached pages) and writes a file in the data
 * directory. Requests only read the last finding, so a stuck disk never blocks them.
 * On a libSQL server it reads the registry there instead: every query
 * is a fresh request, and there is no directory of ours to write.
 */
export class HealthProbe {
  private finding: ApiError | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;
  private probing = false;

  constructor(
    private readonly dataDir: string,
    private readonly reportError: ReportError,
    /** The server's own connection to the registry (on files, `PinnedFileDb`). */
    private readonly platform: Db,
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
      // Out of descriptors, every check fails for that one reason: name it, not the files.
      const exhausted = problems.length ? outOfDescriptors() : null;
      if (exhausted) problems.splice(0, problems.length, FILE_SYSTEM_REASONS[exhausted] as string);
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
    if (!(platform instanceof PinnedFileDb))
      return [
        ["the libSQL server cannot be read", () => platform.get("SELECT count(*) FROM stores")],
      ];
    return [
      ["the platform database cannot be read", () => this.readPlatform(platform)],
      [
        "platform.db was replaced under the server (restart it to use the new file)",
        () => {
          if (platform.fileNow() === "replaced") throw new Error("replaced");
        },
      ],
      ["the data directory is not writable", () => this.writeDataDir()],
    ];
  }

  /**
   * Reads platform.db through a connection of its own, only while the path names the file
   * the server has open. A connection to another file moved over it would take the old
   * file's WAL, which keeps the name, for its own, and fold it into the new file at close;
   * and where the file is gone the binding would make an empty one (it has no read-only
   * or must-exist mode).
   */
  private readPlatform(platform: PinnedFileDb): void {
    const now = platform.fileNow();
    if (now === "missing") throw new Error(`${platform.path} is missing`);
    if (now === "replaced") return; // the next check's problem
    // exec, not prepare: the binding frees a connection's descriptors at close only when no statement holds them.
    const db = new Database(platform.path);
    try {
      db.exec("PRAGMA query_only = 1");
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
