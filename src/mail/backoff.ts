/** How the worker retries a message that could not be delivered. */
export interface RetryPolicy {
  /** Delay before the second attempt; each later one doubles it. */
  baseDelayMs: number;
  /** The doubling stops here. */
  maxDelayMs: number;
  /** A message the server rejects (5xx) is `failed` after this many attempts. */
  maxAttempts: number;
  /**
   * A message that cannot be handed over for other reasons (server down, 4xx, bad
   * login) keeps waiting, like an MTA queue, until it is this old; then it is `failed`.
   */
  maxAgeMs: number;
  /** How long a claimed message stays invisible to other deliveries (a crash mid-send). */
  claimMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  baseDelayMs: 30_000,
  maxDelayMs: 60 * 60_000,
  maxAttempts: 8,
  maxAgeMs: 3 * 24 * 60 * 60_000,
  claimMs: 30_000,
};

/**
 * Exponential backoff with jitter: after attempt n (1-based) wait base·2^(n-1), capped,
 * scaled by a random factor in [0.5, 1) so messages that failed together spread out.
 */
export function retryDelay(
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** exponent);
  return Math.round(ceiling * (0.5 + random() / 2));
}
