import * as v from "valibot";
import { MAX_MINOR, toMinor } from "../format/money";
import { storable } from "../format/text";
import { parseDateTime } from "../format/time";

/**
 * Building blocks shared by the resources' schemas. Messages finish "Field "x" …".
 * `v.metadata({...})` entries change nothing at run time: they carry the JSON Schema
 * keywords the OpenAPI document shows for a `check` it cannot read (src/openapi/).
 */

/**
 * Documents a pipe as `schema` instead of what it reads so far: query and path values
 * arrive as text and are parsed strictly, but clients send them as the numbers and
 * booleans they are (`limit: 30`, `paid: false`), so that is what the document says.
 */
export const documentedAs = <TInput>(schema: v.GenericSchema) =>
  v.metadata<TInput, { documentedAs: v.GenericSchema }>({ documentedAs: schema });

/** The largest id a row can have (and a client can send): 2^53 - 1. */
const MAX_ID = Number.MAX_SAFE_INTEGER;

const idNumber = () => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_ID));

const codePoints = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** A string of at most `max` characters (code points), stored as sent. */
export const text = (max: number) =>
  v.pipe(
    v.string("must be a string."),
    v.check((s) => codePoints(s) <= max, `must be at most ${max} characters long.`),
    v.check(storable, "must be valid Unicode text without NUL characters."),
    v.metadata({ maxLength: max }),
  );

export const nullableText = (max: number) => v.nullable(text(max));

/** Whether text shows nothing: only spaces, controls and invisible format characters (U+200B). */
export const isBlank = (text: string) => /^[\s\p{Cc}\p{Cf}\p{Z}]*$/u.test(text);

/** Text that may not be empty: a required name (a product's, a lead's). */
export const filledText = (max: number) =>
  v.pipe(text(max), v.minLength(1, "must not be empty."), v.metadata({ minLength: 1 }));

/** Text that must say something: a name of the platform's own (a store's, a key's, a status's). */
export const nameText = (max: number) =>
  v.pipe(
    filledText(max),
    v.check((s) => !isBlank(s), "must have a visible character, not only spaces."),
    v.metadata({ pattern: "\\S" }),
  );

/**
 * An address a store can email: RFC 5322's `atext` in the local part (`o'brien@`,
 * `first+tag@`), then a domain of two or more labels, the last letters or an IDN's
 * `xn--` form (`xn--80ak6aa92e.com`, `.xn--4dbrk0ce`). No quotes, spaces, comments or IP
 * literals: the address goes into mail headers as it is. (valibot's `email()` refused
 * the apostrophe and every `xn--` label.)
 */
const EMAIL_PATTERN =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/;

export const email = () =>
  v.pipe(
    v.string("must be a string."),
    v.check((s) => codePoints(s) <= 254, "must be at most 254 characters long."),
    v.metadata({ maxLength: 254, format: "email" }),
    v.regex(EMAIL_PATTERN, "must be a valid email address."),
    // RFC 5321 §4.5.3.1.1: mail servers refuse a longer local part, so its mail could never be sent.
    v.check((s) => s.lastIndexOf("@") <= 64, "must have at most 64 characters before the @."),
    v.metadata({ pattern: `^(?=[^@]{1,64}@)${EMAIL_PATTERN.source.slice(1)}` }),
  );

export const bool = () => v.boolean("must be true or false.");

/** A JSON number that is a positive integer up to 2^53 - 1 (a row id in a body or a fixture record). */
export const positiveInteger = (message = "must be a positive integer.") =>
  v.pipe(v.number(message), v.safeInteger(message), v.minValue(1, message));

/**
 * Not `multipleOf: 0.01`: JSON Schema validators test that with binary floats and
 * reject amounts like 19.99, so "at most 2 decimals" is said in words.
 */
export const MAX_MONEY = MAX_MINOR / 100;
const MONEY_KEYWORDS = {
  minimum: 0,
  maximum: MAX_MONEY,
  description: "An amount with at most 2 decimals.",
};

/** An amount that may be negative (discounts), as answers carry it. */
export const SIGNED_MONEY_KEYWORDS = { minimum: -MAX_MONEY, maximum: MAX_MONEY };

/** Money in: a JSON number ≥ 0 with at most 2 decimals; out: integer minor units. */
export const money = () =>
  v.pipe(
    v.number("must be a number."),
    v.check((n) => !(n > MAX_MONEY), `must be an amount of at most ${MAX_MONEY}.`),
    v.check((n) => toMinor(n) !== null, "must be an amount of at least 0 with at most 2 decimals."),
    v.metadata(MONEY_KEYWORDS),
    v.transform((n) => toMinor(n) as number),
  );

export const nullableMoney = () => v.nullable(money());

/**
 * A path id: a positive integer, written without sign, leading zeros or decimals, up to
 * 2^53 - 1 (every id a row can have), so a well-formed id of any length is looked up.
 */
export const idParam = () =>
  v.pipe(
    v.string(),
    v.regex(/^[1-9]\d*$/, "must be a positive integer."),
    documentedAs<string>(v.pipe(idNumber(), v.examples([1]))),
    v.transform(Number),
    v.check(
      (n: number) => Number.isSafeInteger(n),
      `must be a positive integer up to ${Number.MAX_SAFE_INTEGER}.`,
    ),
  );

export const idParams = v.strictObject({ id: idParam() });

export const limitParam = () =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^(?:[1-9]\d?|100)$/, "must be a whole number from 1 to 100."),
      documentedAs<string>(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100))),
      v.transform(Number),
    ),
    "50",
  );

export const cursorParam = () =>
  v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty.")));

/** `…T09:00:00 02:00`: an offset whose `+` an unencoded query string turned into a space. */
const PLUS_AS_SPACE = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)? \d{2}:?\d{2}$/;

/** What a date-time going in may be, for the documents (the parser checks the calendar too). */
export const DATE_TIME_IN_KEYWORDS = {
  pattern: "^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2}))?$",
  description:
    "ISO 8601 with an offset or Z (2026-01-31T09:00:00+02:00), or a date (2026-01-31) meaning 00:00 Israel time.",
};

/** A date-time query parameter (ISO 8601 with offset, or a bare date in Israel time) → epoch ms. */
export const dateTimeParam = () =>
  v.optional(
    v.pipe(
      v.string(),
      v.check(
        (s) => parseDateTime(s) !== null,
        (issue) =>
          PLUS_AS_SPACE.test(String(issue.input))
            ? "has a space where its offset's + belongs: a URL query reads + as a space, so write it as %2B (2026-01-31T09:00:00%2B02:00)."
            : "must be an ISO 8601 date-time with an offset (2026-01-31T09:00:00+02:00) or a date (2026-01-31).",
      ),
      v.metadata(DATE_TIME_IN_KEYWORDS),
      v.transform((s) => parseDateTime(s) as number),
    ),
  );

export const booleanParam = () =>
  v.optional(
    v.pipe(
      v.picklist(["true", "false"], "must be true or false."),
      documentedAs<"true" | "false">(v.boolean()),
      v.transform((s) => s === "true"),
    ),
  );

/** Answer pieces (documentation only: response schemas are never run against input). */

/** Money out: a JSON number with at most 2 decimals. */
export const moneyOut = () => v.pipe(v.number(), v.metadata(MONEY_KEYWORDS));

export const nullableMoneyOut = () => v.nullable(moneyOut());

/** A date-time out: `YYYY-MM-DDThh:mm:ss+hh:mm` in Israel time. */
export const dateTimeOut = () =>
  v.pipe(
    v.string(),
    v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/),
    v.metadata({ format: "date-time", examples: ["2026-01-31T09:00:00+02:00"] }),
  );

export const nullableDateTimeOut = () => v.nullable(dateTimeOut());

/** A row id out: a positive integer. */
export const idOut = idNumber;
