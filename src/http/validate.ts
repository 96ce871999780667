import * as v from "valibot";
import { type ApiError, echo, fixedError, invalidField, invalidParameter } from "../errors";
import { searchParamsOf } from "./request-url";

type Schema = v.GenericSchema;

/** What valibot names a type it expected, in words a client reads. */
const EXPECTED: Record<string, string> = {
  Object: "a JSON object",
  Array: "a JSON array",
  string: "a string",
  number: "a number",
  boolean: "true or false",
};

function describeIssue(
  issue: v.BaseIssue<unknown>,
  field: string,
  noun: "Field" | "Parameter",
): string {
  // A strict object reports both a missing key (expected `"name"`) and an unknown one (expected "never").
  if (issue.expected === "never" || issue.type === "never")
    return `${noun} "${field}" is not allowed here.`;
  if (issue.received === "undefined" && issue.kind === "schema")
    return `${noun} "${field}" is required.`;
  const custom = issue.message && !issue.message.startsWith("Invalid ") ? issue.message : null;
  if (custom) return `${noun} "${field}" ${custom}`;
  const expected = issue.expected ?? "valid";
  const words = Object.hasOwn(EXPECTED, expected) ? EXPECTED[expected] : expected;
  return `${noun} "${field}" must be ${words} (received ${echo(issue.received)}).`;
}

/** The output of `schema` for `input`; the first problem is thrown as `fail(field, message)`. */
function validate<S extends Schema>(
  schema: S,
  input: unknown,
  noun: "Field" | "Parameter",
  fallbackField: string,
  fail: (field: string, message: string) => ApiError,
): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  const field = echo(v.getDotPath(issue) ?? fallbackField);
  throw fail(field, describeIssue(issue, field, noun));
}

/** Validates a JSON body; the first problem is a 400 `invalid_field` naming the field. */
export const parseBody = <S extends Schema>(schema: S, input: unknown): v.InferOutput<S> =>
  validate(schema, input, "Field", "body", invalidField);

/** Validates path or query parameters; the first problem is a 400 `invalid_parameter`. */
export const parseParams = <S extends Schema>(schema: S, input: unknown): v.InferOutput<S> =>
  validate(schema, input, "Parameter", "query", invalidParameter);

/** Query strings as a plain object; a repeated parameter is itself an error. */
export function queryObject(url: string): Record<string, string> {
  // No prototype: "constructor" is a parameter like any other, and "__proto__" an own key.
  const result: Record<string, string> = Object.create(null);
  if (!url.includes("?")) return result;
  const params = searchParamsOf(url);
  for (const [name, value] of params) {
    if (name in result)
      throw invalidParameter(name, `Parameter "${echo(name)}" may be given only once.`);
    result[name] = value;
  }
  return result;
}

export const nothingToUpdate = () => fixedError("nothing_to_update");
