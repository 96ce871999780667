export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the next clock minute (1..60). */
  reset: number;
}

/**
 * Fixed-window limiter on the UTC clock minute, per key. Counting is a synchronous
 * increment on the single JS thread, so exactly `limit` requests pass per window
 * however many arrive at once. Memory holds only keys seen in the current minute.
 */
export class RateLimiter {
  private minute = -1;
  private counts = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Keys counted in the current minute (for tests and metrics). */
  get trackedKeys(): number {
    return this.counts.size;
  }

  take(id: string, now: number): RateDecision {
    // A clock stepped back (NTP, a VM resumed) stays in the window it left: starting that
    // earlier minute afresh would let every key through again.
    const minute = Math.max(Math.floor(now / 60_000), this.minute);
    if (minute !== this.minute) {
      this.minute = minute;
      this.counts = new Map();
    }
    const reset = Math.min(60, Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000)));
    const used = this.counts.get(id) ?? 0;
    if (used >= this.limit) return { allowed: false, limit: this.limit, remaining: 0, reset };
    this.counts.set(id, used + 1);
    return { allowed: true, limit: this.limit, remaining: this.limit - used - 1, reset };
  }
}
