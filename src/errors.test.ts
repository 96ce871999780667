import { expect, test } from "bun:test";
import { echo } from "./errors";

test("echo keeps 100 characters and cuts longer text with an ellipsis, never inside a surrogate pair", () => {
  expect(echo("a".repeat(100))).toBe("a".repeat(100));
  expect(echo("a".repeat(101))).toBe(`${"a".repeat(100)}…`);
  expect(echo(`${"a".repeat(99)}😀😀`)).toBe(`${"a".repeat(99)}…`);
  // Half a pair is shown as U+FFFD: an answer must be text a strict JSON parser reads.
  expect(echo("a\ud800b\udc00c😀")).toBe("a\ufffdb\ufffdc😀");
  expect(echo(`${"a".repeat(98)}\ud800${"b".repeat(10)}`)).toBe(`${"a".repeat(98)}\ufffdb…`);
  expect(echo(`${"a".repeat(98)}😀😀`)).toBe(`${"a".repeat(98)}😀…`);
});
