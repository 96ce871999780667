/** What the page after a POST shows once: the new key (its secret, this one time) or a notice. */
export type Flash =
  | { kind: "created"; secret: string; name: string }
  | { kind: "deleted"; name: string; hint: string };

const FLASH_LIFETIME_MS = 10 * 60_000;
/** New keys not yet shown, per session: more than a store's five active keys. */
const MAX_PER_SESSION = 10;

interface Held {
  flash: Flash;
  expiresAt: number;
}

/**
 * One-time messages from a POST to the page it redirects to, held in memory per session
 * (never in a cookie, a URL or the database: a new key's secret must not be stored).
 * Taking one removes it, so reloading or going back shows nothing; unread ones expire,
 * and at most `maxSessions` sessions hold any (oldest dropped first). New keys wait in
 * turn (two tabs, a double submit: each secret is shown once, none lost); a notice of a
 * deletion replaces the one before.
 */
export class FlashStore {
  private sessions = new Map<string, Held[]>();

  constructor(private readonly maxSessions = 10_000) {}

  put(sessionId: string, flash: Flash, now: number): void {
    const held = this.live(sessionId, now).filter(
      (h) => flash.kind === "created" || h.flash.kind !== flash.kind,
    );
    held.push({ flash, expiresAt: now + FLASH_LIFETIME_MS });
    this.sessions.delete(sessionId); // to the end: the most recently used
    this.sessions.set(sessionId, held.slice(-MAX_PER_SESSION));
    for (const key of this.sessions.keys()) {
      if (this.sessions.size <= this.maxSessions) break;
      this.sessions.delete(key);
    }
  }

  /**
   * The session's oldest flash of this kind, removed as it is read (others stay) unless
   * `keep` (a HEAD request: a link checker must not use up a key's one showing).
   */
  take(sessionId: string, now: number, kind: Flash["kind"], keep = false): Flash | undefined {
    const held = this.live(sessionId, now);
    const index = held.findIndex((h) => h.flash.kind === kind);
    if (keep) return held[index]?.flash;
    const [taken] = index < 0 ? [] : held.splice(index, 1);
    if (held.length === 0) this.sessions.delete(sessionId);
    else this.sessions.set(sessionId, held);
    return taken?.flash;
  }

  /** How many flashes of this kind the session has waiting. */
  waiting(sessionId: string, now: number, kind: Flash["kind"]): number {
    return this.live(sessionId, now).filter((h) => h.flash.kind === kind).length;
  }

  drop(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  private live(sessionId: string, now: number): Held[] {
    return (this.sessions.get(sessionId) ?? []).filter((h) => h.expiresAt > now);
  }
}
