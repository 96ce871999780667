export interface FailurePolicy {
  limit: number;
  windowMs: number;
  blockMs: number;
  /** Most IPs tracked at once; beyond it the least recently failing are forgotten. */
  maxTracked: number;
}

export const DEFAULT_FAILURE_POLICY: FailurePolicy = {
  limit: 20,
  windowMs: 10 * 60_000,
  blockMs: 10 * 60_000,
  maxTracked: 100_000,
};

interface Entry {
  failures: number[];
  blockedUntil: number;
}

/** Failed keys per client IP; `limit` failures within the window block the IP. */
export class AuthFailures {
  private entries = new Map<string, Entry>();

  constructor(private readonly policy: FailurePolicy = DEFAULT_FAILURE_POLICY) {}

  /** Seconds the IP stays blocked, or 0 when it is not blocked. */
  blockedFor(ip: string, now: number): number {
    const entry = this.entries.get(ip);
    if (!entry || entry.blockedUntil <= now) return 0;
    return Math.ceil((entry.blockedUntil - now) / 1000);
  }

  recordFailure(ip: string, now: number): void {
    let entry = this.entries.get(ip);
    if (entry) this.entries.delete(ip);
    else entry = { failures: [], blockedUntil: 0 };
    this.entries.set(ip, entry); // most recent last
    const since = now - this.policy.windowMs;
    entry.failures = entry.failures.filter((t) => t > since);
    entry.failures.push(now);
    if (entry.failures.length >= this.policy.limit) {
      entry.blockedUntil = now + this.policy.blockMs;
      entry.failures = [];
    }
    this.evict(now);
  }

  private evict(now: number): void {
    if (this.entries.size <= this.policy.maxTracked) return;
    for (const [ip, entry] of this.entries) {
      if (this.entries.size <= this.policy.maxTracked) break;
      if (entry.blockedUntil > now) continue; // a flood of new IPs must not lift a block
      this.entries.delete(ip);
    }
  }
}
