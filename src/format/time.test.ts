import { describe, expect, test } from "bun:test";
import { formatIsrael, israelYearsLater, parseDateTime } from "./time";

describe("formatIsrael", () => {
  test("winter is +02:00", () => {
    expect(formatIsrael(Date.UTC(2026, 0, 15, 10, 30, 5))).toBe("2026-01-15T12:30:05+02:00");
  });
  test("summer is +03:00", () => {
    expect(formatIsrael(Date.UTC(2026, 6, 1, 21, 0, 0))).toBe("2026-07-02T00:00:00+03:00");
  });
  test("spring forward: 2026-03-27 02:00 local jumps to 03:00", () => {
    // Israel moves clocks on the Friday before the last Sunday of March at 02:00.
    expect(formatIsrael(Date.UTC(2026, 2, 26, 23, 59, 59))).toBe("2026-03-27T01:59:59+02:00");
    expect(formatIsrael(Date.UTC(2026, 2, 27, 0, 0, 0))).toBe("2026-03-27T03:00:00+03:00");
  });
  test("fall back: 2026-10-25 02:00 local returns to 01:00", () => {
    expect(formatIsrael(Date.UTC(2026, 9, 24, 22, 59, 59))).toBe("2026-10-25T01:59:59+03:00");
    expect(formatIsrael(Date.UTC(2026, 9, 24, 23, 0, 0))).toBe("2026-10-25T01:00:00+02:00");
  });
  test("the hour Israel's offset changed off the hour (end of 1917): each side its own offset", () => {
    expect(formatIsrael(Date.UTC(1917, 11, 31, 21, 45))).toBe("1917-12-31T23:45:00+02:00");
    expect(formatIsrael(Date.UTC(1917, 11, 31, 21, 30))).toBe("1917-12-31T23:51:00+02:21");
  });
  test("drops milliseconds without rounding up", () => {
    expect(formatIsrael(Date.UTC(2026, 0, 1, 0, 0, 0, 999))).toBe("2026-01-01T02:00:00+02:00");
  });
});

describe("parseDateTime", () => {
  test("offset and Z forms", () => {
    expect(parseDateTime("2026-01-15T12:30:05+02:00")).toBe(Date.UTC(2026, 0, 15, 10, 30, 5));
    expect(parseDateTime("2026-01-15T10:30:05Z")).toBe(Date.UTC(2026, 0, 15, 10, 30, 5));
    expect(parseDateTime("2026-01-15T10:30:05.250Z")).toBe(Date.UTC(2026, 0, 15, 10, 30, 5, 250));
    expect(parseDateTime("2026-01-15T05:30-0500")).toBe(Date.UTC(2026, 0, 15, 10, 30, 0));
  });
  test("bare date is Israel midnight, on both sides of DST", () => {
    expect(parseDateTime("2026-01-15")).toBe(Date.UTC(2026, 0, 14, 22, 0, 0));
    expect(parseDateTime("2026-07-01")).toBe(Date.UTC(2026, 5, 30, 21, 0, 0));
    expect(parseDateTime("2026-03-27")).toBe(Date.UTC(2026, 2, 26, 22, 0, 0));
    expect(parseDateTime("2026-03-28")).toBe(Date.UTC(2026, 2, 27, 21, 0, 0));
    expect(parseDateTime("2026-10-25")).toBe(Date.UTC(2026, 9, 24, 21, 0, 0));
    expect(parseDateTime("2026-10-26")).toBe(Date.UTC(2026, 9, 25, 22, 0, 0));
  });
  test("a bare date on a night the clocks went back to 00:00 is the first 00:00", () => {
    // 2004-09-22: 01:00+03:00 became 00:00+02:00, so 00:00 came twice.
    expect(parseDateTime("2004-09-22")).toBe(Date.UTC(2004, 8, 21, 21, 0, 0));
    expect(formatIsrael(parseDateTime("2004-09-22") as number)).toBe("2004-09-22T00:00:00+03:00");
    expect(parseDateTime("1980-09-14")).toBe(Date.UTC(1980, 8, 13, 21, 0, 0));
    // A night the clocks skipped 00:00 starts at 01:00.
    expect(formatIsrael(parseDateTime("1985-04-14") as number)).toBe("1985-04-14T01:00:00+03:00");
  });
  test("a fraction finer than a millisecond is cut", () => {
    const at = (ms: number) => Date.UTC(2026, 4, 4, 20, 59, 59) + ms;
    expect(parseDateTime("2026-05-04T20:59:59.9995Z")).toBe(at(999));
    expect(parseDateTime("2026-05-04T20:59:59.123000001Z")).toBe(at(123));
    expect(parseDateTime("2026-05-04T20:59:59.5Z")).toBe(at(500));
    expect(parseDateTime("2026-05-04T20:59:59.577Z")).toBe(at(577));
  });
  test("round trip of formatted output", () => {
    const instant = Date.UTC(2026, 9, 24, 22, 30, 0);
    expect(parseDateTime(formatIsrael(instant))).toBe(instant);
  });
  test("years 0001 to 9999 are those years, and come back with four digits", () => {
    // Date.UTC reads years 0-99 as 1900-1999.
    expect(formatIsrael(parseDateTime("0050-06-01T00:00:00Z") as number)).toStartWith(
      "0050-06-01T",
    );
    expect(parseDateTime("0099-12-31T12:00:00Z")).toBe(-59011502400000);
    expect(parseDateTime("0004-02-29")).not.toBeNull(); // a leap year; 1904 was one too
    expect(parseDateTime("0100-02-29")).toBeNull(); // not one
    expect(formatIsrael(parseDateTime("9999-12-31T21:59:59Z") as number)).toBe(
      "9999-12-31T23:59:59+02:00",
    );
    // The first moment of year 0001 in Israel (local mean time then, +02:20:54, written +02:21).
    expect(formatIsrael(parseDateTime("0001-01-01") as number)).toBe("0001-01-01T00:00:00+02:21");
    expect(parseDateTime("0001-01-01T00:00:00+02:21")).toBe(parseDateTime("0001-01-01"));
    expect(parseDateTime("0001-01-01T00:00:00+02:22")).toBeNull();
    // Year 0000, and an instant that is year 10000 in Israel: no four-digit year to answer with.
    expect(parseDateTime("0000-06-01T00:00:00Z")).toBeNull();
    expect(parseDateTime("9999-12-31T23:00:00Z")).toBeNull();
  });
  test("rejects everything else", () => {
    for (const bad of [
      "",
      "2026-13-01",
      "2026-02-30",
      "2026-01-15T10:30:05",
      "yesterday",
      "2026-01-15 10:30Z",
      "2026-01-15T24:00:00Z",
      "1700000000",
    ]) {
      expect(parseDateTime(bad)).toBeNull();
    }
  });
});

describe("israelYearsLater", () => {
  const later = (iso: string) => formatIsrael(israelYearsLater(parseDateTime(iso) as number, 1));
  test("the same Israel date and time a year on, across a 29 February", () => {
    expect(later("2027-03-01T10:00:00+02:00")).toBe("2028-03-01T10:00:00+02:00");
    expect(later("2027-06-01T09:15:00+03:00")).toBe("2028-06-01T09:15:00+03:00");
    expect(later("2028-02-28T12:00:00+02:00")).toBe("2029-02-28T12:00:00+02:00");
  });
  test("29 February becomes 1 March", () => {
    expect(later("2028-02-29T12:00:00+02:00")).toBe("2029-03-01T12:00:00+02:00");
  });
  test("just after midnight in Israel (still the day before in UTC)", () => {
    expect(later("2027-03-01T00:30:00+02:00")).toBe("2028-03-01T00:30:00+02:00");
  });
  test("a date on the other side of a clock change keeps its time of day", () => {
    // 25 March 2027 is winter time; 25 March 2028 falls after the 2028 spring change (24 March).
    expect(later("2027-03-25T08:00:00+02:00")).toBe("2028-03-25T08:00:00+03:00");
  });
});
