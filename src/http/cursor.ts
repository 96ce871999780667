import { createHmac, timingSafeEqual } from "node:crypto";
import { invalidParameter } from "../errors";

/** Where a page ended: the sort value and id of its last row (a number, or a store's slug). */
export interface Position<Id extends number | string = number> {
  sort: number;
  id: Id;
}

/** What a cursor is bound to: its list, its store and its filters. */
export interface CursorScope {
  list: string;
  store: string;
  filters: string;
}

const SIGNATURE_BYTES = 16;

function sign(secret: string, payload: string): Buffer {
  return createHmac("sha256", secret).update(payload).digest().subarray(0, SIGNATURE_BYTES);
}

const scopeKey = (scope: CursorScope) => `${scope.list}\n${scope.store}\n${scope.filters}`;

/** An opaque, tamper-evident cursor: base64url(position) "." base64url(HMAC(scope, position)). */
export function encodeCursor(
  secret: string,
  scope: CursorScope,
  position: Position<number | string>,
): string {
  const payload = Buffer.from(JSON.stringify([position.sort, position.id])).toString("base64url");
  const signature = sign(secret, `${scopeKey(scope)}\n${payload}`).toString("base64url");
  return `${payload}.${signature}`;
}

const badCursor = () =>
  invalidParameter(
    "cursor",
    'Parameter "cursor" is not valid here; pass back the nextCursor of this same list and filters unchanged.',
  );

/** The position in a cursor made for exactly this scope; anything else is 400 invalid_parameter. */
export function decodeCursor(secret: string, scope: CursorScope, cursor: string): Position;
export function decodeCursor(
  secret: string,
  scope: CursorScope,
  cursor: string,
  idType: "string",
): Position<string>;
export function decodeCursor(
  secret: string,
  scope: CursorScope,
  cursor: string,
  idType: "number" | "string" = "number",
): Position<number | string> {
  const [payload, signature, extra] = cursor.split(".");
  if (!payload || !signature || extra !== undefined || cursor.length > 200) throw badCursor();
  // Compared as text: decoding base64url skips stray characters and padding and ignores the
  // last character's spare bits, so other strings than the one given out would pass.
  const expected = Buffer.from(
    sign(secret, `${scopeKey(scope)}\n${payload}`).toString("base64url"),
  );
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw badCursor();
  try {
    const [sort, id] = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    const idFits = idType === "number" ? Number.isSafeInteger(id) : typeof id === "string";
    if (Number.isSafeInteger(sort) && idFits) return { sort, id };
  } catch {
    // falls through: a signed but unreadable cursor is still a bad cursor
  }
  throw badCursor();
}
