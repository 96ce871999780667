import { type RetryPolicy, retryDelay } from "./backoff";

/**
 * The transport's outage back-off: while the transport is down every message would fail
 * the same way, so nothing is attempted until a wait that grows with each failure in a
 * row (the retry schedule, jittered); one successful hand-over ends the outage.
 */
export class Outage {
  private failures = 0;
  private pausedUntil = 0;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly random: () => number,
  ) {}

  /** Whether delivery waits at `now`. */
  paused(now: number): boolean {
    return this.pausedUntil > now;
  }

  failed(now: number): void {
    this.failures++;
    this.pausedUntil = now + retryDelay(this.failures, this.policy, this.random);
  }

  delivered(): void {
    this.failures = 0;
  }
}
