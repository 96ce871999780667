import type { StorePool } from "../db/pool";
import { type ReportError, reportToStderr } from "../log";

const MINUTE = 60_000;
const MAX_TRACKED = 100_000;

/**
 * Records `lastUsedAt` at most once a minute per key, off the request path, so a busy
 * key does not turn every read into a write.
 */
export class KeyUsage {
  private lastWritten = new Map<string, number>();

  constructor(
    private readonly pool: StorePool,
    private readonly reportError: ReportError = reportToStderr,
  ) {}

  touch(slug: string, keyId: number, now: number): void {
    const id = `${slug}:${keyId}`;
    const minute = Math.floor(now / MINUTE);
    if (this.lastWritten.get(id) === minute) return;
    if (this.lastWritten.size >= MAX_TRACKED) this.lastWritten.clear();
    this.lastWritten.set(id, minute);
    this.pool
      .use(slug, (db) => db.run("UPDATE api_keys SET last_used_at = ? WHERE id = ?", [now, keyId]))
      .catch((error) => this.reportError(`could not record key use for ${slug}`, error));
  }
}
