export interface FailurePolicy {
  limit: number;
  windowMs: number;
  blockMs: number;
  /** Most IPs with recent failures tracked at once; beyond it the least recently failing are forgotten. */
  maxTracked: number;
  /** Most IPs blocked at once; beyond it the block closest to its end is dropped. */
  maxBlocked: number;
}

export const DEFAULT_FAILURE_POLICY: FailurePolicy = {
  limit: 20,
  windowMs: 10 * 60_000,
  blockMs: 10 * 60_000,
  maxTracked: 100_000,
  maxBlocked: 100_000,
};

/**
 * Failed keys per client IP: `limit` failures within the window block the IP for
 * `blockMs`. Every operation is O(1) amortised and memory is bounded:
 * - `failing` keeps at most `limit` timestamps for at most `maxTracked` IPs, in order of
 *   their last failure; a flood of new IPs only pushes out the stalest counts.
 * - `blocked` is separate, so that flood can never lift a block. Blocks all last the same
 *   time, so insertion order is expiry order and expired ones are dropped from the front.
 *   Lifting a block by overflow would take `maxBlocked` other IPs each failing `limit` times.
 */
export class AuthFailures {
  private failing = new Map<string, number[]>();
  private blocked = new Map<string, number>();
  private failureCount = 0;

  constructor(private readonly policy: FailurePolicy = DEFAULT_FAILURE_POLICY) {}

  /** Whether any IP may be blocked: when none is, a request need not work out its bucket. */
  get anyBlocked(): boolean {
    return this.blocked.size > 0;
  }

  /** Seconds the IP stays blocked (rounded up), or 0 when it is not blocked. */
  blockedFor(ip: string, now: number): number {
    let until = this.blocked.get(ip);
    if (until === undefined) return 0;
    if (until <= now) {
      this.blocked.delete(ip);
      return 0;
    }
    // A clock stepped back must not make a block longer than a block is.
    if (until - now > this.policy.blockMs) {
      until = now + this.policy.blockMs;
      this.blocked.set(ip, until);
    }
    return Math.ceil((until - now) / 1000);
  }

  /** Counts one failed key; returns true when this failure blocks the IP. */
  recordFailure(ip: string, now: number): boolean {
    this.failureCount++;
    const since = now - this.policy.windowMs;
    const times = (this.failing.get(ip) ?? []).filter((t) => t > since);
    this.failing.delete(ip); // re-inserted last: Map order is recency order
    times.push(now);
    if (times.length >= this.policy.limit) {
      this.block(ip, now);
      this.dropStaleFailures(since);
      return true;
    }
    this.failing.set(ip, times);
    this.dropStaleFailures(since);
    return false;
  }

  /** Failed keys since the server started (for metrics). */
  get failures(): number {
    return this.failureCount;
  }

  /** IPs currently tracked (failing or blocked); for tests and metrics. */
  get size(): { failing: number; blocked: number } {
    return { failing: this.failing.size, blocked: this.blocked.size };
  }

  private block(ip: string, now: number): void {
    this.blocked.delete(ip);
    this.blocked.set(ip, now + this.policy.blockMs);
    for (const [oldest, until] of this.blocked) {
      if (until > now && this.blocked.size <= this.policy.maxBlocked) break;
      this.blocked.delete(oldest);
    }
  }

  /** Drops counts whose last failure left the window, and the least recent beyond `maxTracked`. */
  private dropStaleFailures(since: number): void {
    for (const [ip, times] of this.failing) {
      const stale = (times[times.length - 1] ?? 0) <= since;
      if (!stale && this.failing.size <= this.policy.maxTracked) break;
      this.failing.delete(ip);
    }
  }
}
