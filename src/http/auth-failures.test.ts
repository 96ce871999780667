import { describe, expect, test } from "bun:test";
import { AuthFailures, DEFAULT_FAILURE_POLICY, type FailurePolicy } from "./auth-failures";

const MIN = 60_000;
const policy = (over: Partial<FailurePolicy> = {}) => ({ ...DEFAULT_FAILURE_POLICY, ...over });

describe("AuthFailures", () => {
  test("the 20th failure blocks: it reports true, later checks are blocked for 600 s", () => {
    const failures = new AuthFailures();
    const t0 = 1_000_000;
    for (let i = 1; i < 20; i++) {
      expect(failures.recordFailure("1.2.3.4", t0 + i)).toBe(false);
      expect(failures.blockedFor("1.2.3.4", t0 + i)).toBe(0);
    }
    expect(failures.recordFailure("1.2.3.4", t0 + 20)).toBe(true);
    expect(failures.blockedFor("1.2.3.4", t0 + 20)).toBe(600);
    expect(failures.blockedFor("1.2.3.4", t0 + 20 + 1)).toBe(600); // rounded up
    expect(failures.blockedFor("1.2.3.4", t0 + 20 + 599_001)).toBe(1);
    expect(failures.blockedFor("1.2.3.4", t0 + 20 + 600_000)).toBe(0);
    expect(failures.blockedFor("5.6.7.8", t0 + 20)).toBe(0);
  });

  test("a clock stepped back an hour does not make a block last longer than 10 minutes", () => {
    const failures = new AuthFailures(policy({ limit: 1 }));
    const t0 = 100 * MIN;
    expect(failures.recordFailure("ip", t0)).toBe(true);
    const back = t0 - 60 * MIN;
    expect(failures.blockedFor("ip", back)).toBe(600);
    expect(failures.blockedFor("ip", back + 10 * MIN)).toBe(0);
  });

  test("failures older than the window do not count", () => {
    const failures = new AuthFailures(policy({ limit: 3 }));
    failures.recordFailure("ip", 0);
    failures.recordFailure("ip", 5);
    expect(failures.recordFailure("ip", 10 * MIN)).toBe(false); // exactly 10 minutes old: out
    expect(failures.recordFailure("ip", 10 * MIN + 2)).toBe(true);
  });

  test("after a block ends the count starts over", () => {
    const failures = new AuthFailures(policy({ limit: 2 }));
    failures.recordFailure("ip", 0);
    failures.recordFailure("ip", 1);
    expect(failures.blockedFor("ip", 10 * MIN + 1)).toBe(0);
    expect(failures.recordFailure("ip", 10 * MIN + 2)).toBe(false);
  });

  test("a flood of distinct failing IPs keeps memory bounded and lifts no block", () => {
    const failures = new AuthFailures(policy({ limit: 2, maxTracked: 100, maxBlocked: 50 }));
    failures.recordFailure("victim-of-own-mistakes", 0);
    failures.recordFailure("victim-of-own-mistakes", 1);
    for (let i = 0; i < 10_000; i++) failures.recordFailure(`flood-${i}`, 2 + i);
    expect(failures.size.failing).toBeLessThanOrEqual(100);
    expect(failures.size.blocked).toBe(1);
    expect(failures.blockedFor("victim-of-own-mistakes", 1_001)).toBe(599);
  });

  test("blocked IPs are bounded too; overflow drops the block closest to its end", () => {
    const failures = new AuthFailures(policy({ limit: 1, maxTracked: 10, maxBlocked: 3 }));
    for (let i = 0; i < 5; i++) failures.recordFailure(`ip-${i}`, i);
    expect(failures.size.blocked).toBe(3);
    expect(failures.blockedFor("ip-0", 10)).toBe(0);
    expect(failures.blockedFor("ip-1", 10)).toBe(0);
    expect(failures.blockedFor("ip-4", 10)).toBe(600);
  });

  test("stale entries are dropped as new failures arrive", () => {
    const failures = new AuthFailures(policy({ limit: 5 }));
    for (let i = 0; i < 100; i++) failures.recordFailure(`old-${i}`, i);
    failures.recordFailure("new", 11 * MIN);
    expect(failures.size.failing).toBe(1);
    failures.recordFailure("blocked", 11 * MIN);
    for (let i = 0; i < 4; i++) failures.recordFailure("blocked", 11 * MIN);
    failures.recordFailure("later", 30 * MIN); // the block above has ended
    failures.recordFailure("later", 30 * MIN); // (its entry goes when the next block is made)
    expect(failures.blockedFor("blocked", 30 * MIN)).toBe(0);
    expect(failures.size.blocked).toBe(0);
  });
});
