import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEYS, startTestServer, type TestServer, testStore } from "./helpers";

/**
 * Black-box: with --rate-limit 30, exactly 30 of 50 concurrent requests pass. A burst
 * that straddles a clock minute proves nothing, so it is repeated with a fresh key.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ stores: [testStore()], flags: { "rate-limit": "30" } });
});
afterAll(() => server.stop());

const minute = () => Math.floor(Date.now() / 60_000);

describe("rate limit on the real server", () => {
  test("exactly `limit` of 50 concurrent requests pass in one window; the rest are 429 rate_limited", async () => {
    for (const key of [KEYS.all, KEYS.read, KEYS.none]) {
      const before = minute();
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => server.request("/api/v1/__limit-probe", { key })),
      );
      if (minute() !== before) continue;
      const passed = answers.filter((a) => a.status !== 429);
      const limited = answers.filter((a) => a.status === 429);
      expect(passed.length).toBe(30);
      expect(
        passed.map((a) => Number(a.headers.get("ratelimit-remaining"))).sort((a, b) => a - b),
      ).toEqual(Array.from({ length: 30 }, (_, i) => i));
      expect(limited.length).toBe(20);
      for (const answer of limited) {
        expect(answer.json.error.code).toBe("rate_limited");
        expect(answer.headers.get("ratelimit-limit")).toBe("30");
        expect(answer.headers.get("ratelimit-remaining")).toBe("0");
        const reset = Number(answer.headers.get("ratelimit-reset"));
        expect(reset).toBeGreaterThanOrEqual(1);
        expect(reset).toBeLessThanOrEqual(60);
        expect(answer.headers.get("retry-after")).toBe(String(reset));
      }
      return;
    }
    throw new Error("every burst straddled a minute boundary");
  });
});
