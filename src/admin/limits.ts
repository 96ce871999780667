/**
 * "At most `limit` events per `windowMs` per key", over a sliding window: each key keeps
 * the times of its last `limit` events. Keys whose events are all older than the window
 * are swept once the map grows past `maxKeys`, and if that frees nothing the oldest half
 * goes, so memory stays bounded whatever the traffic. Times come from a monotonic clock:
 * a wall clock stepped back would stretch every window by the step.
 */
export class WindowLimit {
  private events = new Map<string, number[]>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly clock: () => number = () => performance.now(),
    private readonly maxKeys = 100_000,
  ) {}

  /** Counts an event for `key`; false (and nothing counted) when the key is over its limit. */
  take(key: string): boolean {
    const now = this.clock();
    const recent = (this.events.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (recent.length >= this.limit) {
      this.events.set(key, recent);
      return false;
    }
    recent.push(now);
    this.events.delete(key); // re-inserted last: the map's order is least recently used first
    this.events.set(key, recent);
    if (this.events.size > this.maxKeys) this.sweep(now);
    return true;
  }

  /** Takes back the latest event counted for `key`, for an action that then failed. */
  giveBack(key: string): void {
    this.events.get(key)?.pop();
  }

  /** Seconds until `key` may act again (at least 1). */
  retryAfter(key: string): number {
    const now = this.clock();
    const oldest = (this.events.get(key) ?? [])[0] ?? now;
    return Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000));
  }

  get size(): number {
    return this.events.size;
  }

  private sweep(now: number): void {
    for (const [key, times] of this.events) {
      if ((times.at(-1) ?? 0) <= now - this.windowMs) this.events.delete(key);
    }
    if (this.events.size <= this.maxKeys) return;
    let drop = Math.ceil(this.events.size / 2);
    for (const key of this.events.keys()) {
      if (drop-- <= 0) break;
      this.events.delete(key);
    }
  }
}
