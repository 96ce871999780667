import { describe, expect, test } from "bun:test";
import { ApiError } from "../errors";
import { decodeCursor, encodeCursor } from "./cursor";

const scope = { list: "orders", store: "shop1", filters: "[]" };
const secret = "test-secret";

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof ApiError ? `${error.code}:${error.extras.field}` : "other";
  }
  return undefined;
}

describe("cursors", () => {
  test("round trip", () => {
    const cursor = encodeCursor(secret, scope, { sort: 1767225600000, id: 42 });
    expect(decodeCursor(secret, scope, cursor)).toEqual({ sort: 1767225600000, id: 42 });
  });

  test("a slug for an id, where the list asks for one; a number is refused there, and a slug elsewhere", () => {
    const slugCursor = encodeCursor(secret, scope, { sort: 1, id: "shop9" });
    expect(decodeCursor(secret, scope, slugCursor, "string")).toEqual({ sort: 1, id: "shop9" });
    expect(codeOf(() => decodeCursor(secret, scope, slugCursor))).toBe("invalid_parameter:cursor");
    const numberCursor = encodeCursor(secret, scope, { sort: 1, id: 2 });
    expect(codeOf(() => decodeCursor(secret, scope, numberCursor, "string"))).toBe(
      "invalid_parameter:cursor",
    );
  });

  test("bound to list, store and filters", () => {
    const cursor = encodeCursor(secret, scope, { sort: 1, id: 2 });
    expect(codeOf(() => decodeCursor(secret, { ...scope, list: "customers" }, cursor))).toBe(
      "invalid_parameter:cursor",
    );
    expect(codeOf(() => decodeCursor(secret, { ...scope, store: "shop2" }, cursor))).toBe(
      "invalid_parameter:cursor",
    );
    expect(
      codeOf(() => decodeCursor(secret, { ...scope, filters: '[["paid",true]]' }, cursor)),
    ).toBe("invalid_parameter:cursor");
    expect(codeOf(() => decodeCursor("other-secret", scope, cursor))).toBe(
      "invalid_parameter:cursor",
    );
  });

  test("an edited position or signature is refused", () => {
    const cursor = encodeCursor(secret, scope, { sort: 1, id: 2 });
    const [payload, signature] = cursor.split(".");
    const forged = `${Buffer.from(JSON.stringify([1, 3])).toString("base64url")}.${signature}`;
    expect(codeOf(() => decodeCursor(secret, scope, forged))).toBe("invalid_parameter:cursor");
    expect(codeOf(() => decodeCursor(secret, scope, `${payload}.AAAA`))).toBe(
      "invalid_parameter:cursor",
    );
    // Strings base64url decodes to the same bytes: padding, stray characters, spare bits.
    const lastBitsFlipped = (s: string) =>
      s.slice(0, -1) + String.fromCharCode(s.charCodeAt(s.length - 1) ^ 1);
    for (const altered of [
      `${cursor}=`,
      `${cursor}==`,
      `${cursor}\u0000`,
      `${cursor}!!`,
      `${payload}.${signature?.slice(0, 4)} ${signature?.slice(4)}`,
      lastBitsFlipped(cursor),
    ]) {
      expect([altered, codeOf(() => decodeCursor(secret, scope, altered))]).toEqual([
        altered,
        "invalid_parameter:cursor",
      ]);
    }
    for (const junk of ["", ".", "abc", "a.b.c", "%%%.%%%", "x".repeat(500)]) {
      expect(codeOf(() => decodeCursor(secret, scope, junk))).toBe("invalid_parameter:cursor");
    }
  });
});
