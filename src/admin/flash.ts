/** What the page after a POST shows once: the new key (its secret, this one time) or a notice. */
export type Flash =
  | { kind: "created"; secret: string; name: string }
  | { kind: "deleted"; name: string; hint: string };

const FLASH_LIFETIME_MS = 10 * 60_000;

/**
 * One-time messages from a POST to the page it redirects to, held in memory per session
 * (never in a cookie, a URL or the database: a new key's secret must not be stored).
 * Taking one removes it, so reloading or going back shows nothing; unread ones expire,
 * and at most `maxEntries` are held (oldest dropped first).
 */
export class FlashStore {
  private entries = new Map<string, { flash: Flash; expiresAt: number }>();

  constructor(private readonly maxEntries = 10_000) {}

  put(sessionId: string, flash: Flash, now: number): void {
    this.entries.delete(sessionId);
    this.entries.set(sessionId, { flash, expiresAt: now + FLASH_LIFETIME_MS });
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(key);
    }
  }

  /** The session's flash of this kind, removed as it is read (one of another kind stays). */
  take(sessionId: string, now: number, kind: Flash["kind"]): Flash | undefined {
    const entry = this.entries.get(sessionId);
    if (!entry || entry.flash.kind !== kind) return undefined;
    this.entries.delete(sessionId);
    return entry.expiresAt > now ? entry.flash : undefined;
  }

  drop(sessionId: string): void {
    this.entries.delete(sessionId);
  }
}
