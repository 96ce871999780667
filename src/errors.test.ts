import { expect, test } from "bun:test";
import { echo } from "./errors";

test("echo keeps 100 characters and cuts longer text with an ellipsis, never inside a surrogate pair", () => {
  expect(echo("a".repeat(100))).toBe("a".repeat(100));
  expect(echo("a".repeat(101))).toBe(`${"a".repeat(100)}…`);
  expect(echo(`${"a".repeat(99)}😀😀`)).toBe(`${"a".repeat(99)}…`);
  expect(echo(`${"a".repeat(98)}😀😀`)).toBe(`${"a".repeat(98)}😀…`);
});
