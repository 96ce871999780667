/**
 * Date-times leave the API as `YYYY-MM-DDThh:mm:ss+hh:mm` in Israel time and enter it as
 * ISO 8601 with an offset (or `Z`), or as a bare `YYYY-MM-DD` meaning 00:00 Israel time.
 * Internally every instant is epoch milliseconds.
 */

const ZONE = "Asia/Jerusalem";
const HOUR = 3_600_000;

const offsetFormatter = new Intl.DateTimeFormat("en-US", {
  timeZone: ZONE,
  hourCycle: "h23",
  year: "numeric",
  month: "numeric",
  day: "numeric",
  hour: "numeric",
  minute: "numeric",
  second: "numeric",
  era: "short",
});

/**
 * Israel's offset is cached per UTC hour; an hour in which it changes off the hour (the
 * last change of local mean time, 1917-12-31T21:39:20Z) is worked out per instant.
 */
const offsetByHour = new Map<number, number>();
const OFFSET_CACHE_LIMIT = 50_000;

/** `Date.UTC`, but years 0–99 are those years (`Date.UTC` reads them as 1900–1999). */
function utc(
  year: number,
  monthIndex: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  ms = 0,
) {
  const date = new Date(Date.UTC(2000, monthIndex, day, hour, minute, second, ms));
  date.setUTCFullYear(year);
  return date.getTime();
}

function computeOffsetMinutes(epochMs: number): number {
  const parts: Record<string, number> = {};
  let beforeYearOne = false;
  for (const part of offsetFormatter.formatToParts(new Date(epochMs))) {
    if (part.type === "era") beforeYearOne = part.value === "BC";
    else if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  // The last hours of 1 BC (year 0) are written as year 1 of another era.
  const year = beforeYearOne ? 1 - parts.year : parts.year;
  const asUtc = utc(year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  const wholeSeconds = Math.floor(epochMs / 1000) * 1000;
  return Math.round((asUtc - wholeSeconds) / 60_000);
}

/** Minutes east of UTC in Israel at the given instant (120 in winter, 180 in summer). */
function israelOffsetMinutes(epochMs: number): number {
  const hour = Math.floor(epochMs / HOUR);
  let offset = offsetByHour.get(hour);
  if (offset === undefined) {
    offset = computeOffsetMinutes(hour * HOUR);
    if (computeOffsetMinutes((hour + 1) * HOUR - 1000) !== offset)
      return computeOffsetMinutes(epochMs);
    if (offsetByHour.size >= OFFSET_CACHE_LIMIT) offsetByHour.clear();
    offsetByHour.set(hour, offset);
  }
  return offset;
}

const pad2 = (n: number) => (n < 10 ? "0" : "") + n;

function pad4(n: number): string {
  return String(n).padStart(4, "0");
}

const DAY = 86_400_000;

/**
 * `YYYY-MM-DDT` per local day and `+hh:mm` per offset: in a page of orders most of each
 * formatted instant repeats, so only the time of day is built per call.
 */
const datePrefixes = new Map<number, string>();
const offsetSuffixes = new Map<number, string>();
const DATE_PREFIX_LIMIT = 50_000;
/** `hh:mm` for each minute of a day, and `:ss` for each second of a minute. */
const MINUTES_OF_DAY = Array.from(
  { length: 1440 },
  (_, m) => `${pad2(Math.floor(m / 60))}:${pad2(m % 60)}`,
);
const SECONDS = Array.from({ length: 60 }, (_, s) => `:${pad2(s)}`);

function datePrefix(day: number): string {
  let prefix = datePrefixes.get(day);
  if (prefix === undefined) {
    const date = new Date(day * DAY);
    prefix = `${pad4(date.getUTCFullYear())}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())}T`;
    if (datePrefixes.size >= DATE_PREFIX_LIMIT) datePrefixes.clear();
    datePrefixes.set(day, prefix);
  }
  return prefix;
}

function offsetSuffix(offset: number): string {
  let suffix = offsetSuffixes.get(offset);
  if (suffix === undefined) {
    const abs = Math.abs(offset);
    suffix = `${offset < 0 ? "-" : "+"}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
    offsetSuffixes.set(offset, suffix);
  }
  return suffix;
}

/**
 * The same Israel date and time `years` later (29 February becomes 1 March); a time the
 * clocks skip that day is read an hour on.
 */
export function israelYearsLater(epochMs: number, years: number): number {
  const local = new Date(epochMs + israelOffsetMinutes(epochMs) * 60_000);
  local.setUTCFullYear(local.getUTCFullYear() + years);
  const guess = local.getTime() - israelOffsetMinutes(epochMs) * 60_000;
  return local.getTime() - israelOffsetMinutes(guess) * 60_000;
}

/** Formats an instant as Israel local time with its offset, to the second. */
export function formatIsrael(epochMs: number): string {
  const offset = israelOffsetMinutes(epochMs);
  const local = Math.floor(epochMs / 1000) * 1000 + offset * 60_000;
  const day = Math.floor(local / DAY);
  const second = (local - day * DAY) / 1000;
  return (
    datePrefix(day) +
    MINUTES_OF_DAY[Math.floor(second / 60)] +
    SECONDS[second % 60] +
    offsetSuffix(offset)
  );
}

export function formatIsraelOrNull(epochMs: number | null): string | null {
  return epochMs === null ? null : formatIsrael(epochMs);
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

function validDate(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]);
}

/** The instants whose Israel time has a year of four digits, 0001 to 9999, as answers write it. */
const FIRST_INSTANT = israelMidnight(1, 1, 1);
const LAST_INSTANT = israelMidnight(10_000, 1, 1) - 1;
const inRange = (instant: number) => instant >= FIRST_INSTANT && instant <= LAST_INSTANT;

/**
 * Epoch ms of the start of the given calendar day in Israel: its 00:00, the first one where
 * the clocks went back from 01:00 to 00:00 that night, and 01:00 where they skipped 00:00.
 */
function israelMidnight(year: number, month: number, day: number): number {
  const wallClock = utc(year, month - 1, day);
  let instant = wallClock - israelOffsetMinutes(wallClock) * 60_000;
  instant = wallClock - israelOffsetMinutes(instant) * 60_000;
  // The offset of the day before read the same wall clock earlier, if it was in force then.
  const earlier = wallClock - israelOffsetMinutes(wallClock - DAY) * 60_000;
  const readsMidnight = earlier + israelOffsetMinutes(earlier) * 60_000 === wallClock;
  return readsMidnight && earlier < instant ? earlier : instant;
}

/**
 * Parses a date-time input; null when it is not one of the accepted forms. Instants are
 * kept to the millisecond: a finer fraction is cut, in a record and in a filter alike, so
 * a filter given a row's own time finds it.
 */
export function parseDateTime(text: string): number | null {
  const dateOnly = DATE_ONLY.exec(text);
  if (dateOnly) {
    const [year, month, day] = dateOnly.slice(1, 4).map(Number);
    if (!validDate(year, month, day)) return null;
    const midnight = israelMidnight(year, month, day);
    return inRange(midnight) ? midnight : null;
  }
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute] = m.slice(1, 6).map(Number);
  const second = m[6] ? Number(m[6]) : 0;
  const millis = m[7] ? Number(m[7].slice(0, 3).padEnd(3, "0")) : 0;
  if (!validDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (m[8] !== "Z") {
    const digits = m[8].replace(":", "");
    const offsetHours = Number(digits.slice(1, 3));
    const offsetMins = Number(digits.slice(3, 5));
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (digits[0] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const instant = utc(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000;
  return inRange(instant) ? instant : null;
}

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** An instant as people read it, in Israel time: `1 July 2099, 01:30`. */
export function formatIsraelForPeople(epochMs: number): string {
  const [date, time] = formatIsrael(epochMs).split("T");
  const [year, month, day] = date.split("-").map(Number);
  return `${day} ${MONTHS[month - 1]} ${year}, ${time.slice(0, 5)}`;
}
