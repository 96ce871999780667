import { describe, expect, test } from "bun:test";
import { fromMinor, toMinor, toSignedMinor } from "./money";

describe("money", () => {
  test("two decimals become exact minor units", () => {
    expect(toMinor(19.99)).toBe(1999);
    expect(toMinor(0.1)).toBe(10);
    expect(toMinor(1234567.89)).toBe(123456789);
    expect(toMinor(0)).toBe(0);
  });
  test("more than two decimals, negatives and non-finite are refused", () => {
    expect(toMinor(1.005)).toBeNull();
    expect(toMinor(0.1 + 0.2)).toBeNull();
    expect(toMinor(-1)).toBeNull();
    expect(toMinor(Number.NaN)).toBeNull();
    expect(toMinor(Number.POSITIVE_INFINITY)).toBeNull();
    expect(toMinor(1e300)).toBeNull();
  });
  test("signed amounts for discounts", () => {
    expect(toSignedMinor(-12.5)).toBe(-1250);
    expect(toSignedMinor(-0.001)).toBeNull();
  });
  test("output has no float error", () => {
    expect(fromMinor(1999)).toBe(19.99);
    expect(JSON.stringify(fromMinor(1000))).toBe("10");
    expect(fromMinor((toMinor(0.1) ?? 0) + (toMinor(0.2) ?? 0))).toBe(0.3);
  });
});
