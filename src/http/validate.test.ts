import { expect, test } from "bun:test";
import * as v from "valibot";
import type { ApiError } from "../errors";
import { parseBody } from "./validate";

const failure = (fn: () => unknown): ApiError => {
  try {
    fn();
  } catch (error) {
    return error as ApiError;
  }
  throw new Error("did not fail");
};

test("a value quoted in a validator's own message is cut to 100 characters", () => {
  const error = failure(() =>
    parseBody(v.strictObject({ n: v.number() }), { n: "v".repeat(10_000) }),
  );
  expect(error.message).toBe(`Field "n" must be a number (received "${"v".repeat(99)}…).`);
});

test("a type the schema has no words for is named in words, not valibot's", () => {
  const schema = v.strictObject({ permissions: v.object({}), tags: v.array(v.string()) });
  expect(failure(() => parseBody(schema, { permissions: null, tags: [] })).message).toBe(
    'Field "permissions" must be a JSON object (received null).',
  );
  expect(failure(() => parseBody(schema, { permissions: {}, tags: "write" })).message).toBe(
    'Field "tags" must be a JSON array (received "write").',
  );
});

test("missing and unknown keys of nested strict objects are told apart", () => {
  const schema = v.strictObject({ address: v.strictObject({ city: v.string() }) });
  expect(failure(() => parseBody(schema, { address: {} })).message).toBe(
    'Field "address.city" is required.',
  );
  expect(failure(() => parseBody(schema, { address: { city: "x", zip: 1 } })).message).toBe(
    'Field "address.zip" is not allowed here.',
  );
});
