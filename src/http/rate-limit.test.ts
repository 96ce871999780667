import { describe, expect, test } from "bun:test";
import { RateLimiter } from "./rate-limit";

const MINUTE = 60_000;

describe("RateLimiter", () => {
  test("exactly `limit` requests pass per key per clock minute", () => {
    const limiter = new RateLimiter(3);
    const at = 10 * MINUTE + 15_000;
    const decisions = [0, 1, 2, 3, 4].map(() => limiter.take("a", at));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
    expect(decisions[0]).toEqual({ allowed: true, limit: 3, remaining: 2, reset: 45 });
    expect(limiter.take("b", at).remaining).toBe(2); // keys are independent
  });

  test("the window is the clock minute: a new minute starts afresh", () => {
    const limiter = new RateLimiter(1);
    expect(limiter.take("a", MINUTE - 1).allowed).toBe(true);
    expect(limiter.take("a", MINUTE - 1).allowed).toBe(false);
    expect(limiter.take("a", MINUTE).allowed).toBe(true);
  });

  test("reset is the seconds to the next minute, 1..60", () => {
    const limiter = new RateLimiter(100);
    expect(limiter.take("a", 5 * MINUTE).reset).toBe(60);
    expect(limiter.take("a", 5 * MINUTE + 1).reset).toBe(60);
    expect(limiter.take("a", 5 * MINUTE + 59_001).reset).toBe(1);
    expect(limiter.take("a", 6 * MINUTE - 1).reset).toBe(1);
  });

  test("a clock stepped back into an earlier minute counts on in the window it left", () => {
    const limiter = new RateLimiter(2);
    expect(limiter.take("a", 10 * MINUTE + 1_000).allowed).toBe(true);
    const back = limiter.take("a", 10 * MINUTE - 15_000); // 16 s back, into minute 9
    expect(back).toEqual({ allowed: true, limit: 2, remaining: 0, reset: 60 });
    expect(limiter.take("a", 10 * MINUTE - 14_000).allowed).toBe(false);
    expect(limiter.take("a", 11 * MINUTE).allowed).toBe(true); // the next minute, as usual
  });

  test("memory holds only the current minute's keys", () => {
    const limiter = new RateLimiter(5);
    for (let i = 0; i < 1000; i++) limiter.take(`k${i}`, 0);
    limiter.take("late", MINUTE);
    expect(limiter.trackedKeys).toBe(1);
  });
});
