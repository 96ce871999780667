import { ApiError, ClientClosed, echo, fixedError, invalidField, tooLargeMessage } from "../errors";
import { STRICT_UTF8 } from "../format/text";
import { bodiesInFlight } from "./body-budget";
import type { AppContext } from "./context";
import { CLOSE_CONNECTION, drainRest } from "./unread-body";

/** The most any body may be: a batch of 500 products, an order from checkout. */
export const MAX_BODY_BYTES = 1_048_576;
/**
 * The most a body for one record may be (a product, a customer, an order's change): the
 * longest valid one, every character an emoji written as two `\u` escapes, is ~66 KB.
 * Parsing a 1 MiB body of tiny values held the server's thread 100–300 ms.
 */
export const RECORD_BODY_BYTES = 128 * 1024;
/**
 * Objects and arrays nested deeper than this are refused before anything walks the body,
 * so no code on the request path recurses as deep as a client likes.
 */
export const MAX_BODY_DEPTH = 32;

// Empty parameters (`application/json;`) are allowed by RFC 9110's grammar.
const JSON_TYPE = /^application\/json\s*(;\s*(charset\s*=\s*"?utf-8"?\s*)?)*$/i;

/** `application/json`, with a UTF-8 charset at most. */
export const isJsonType = (contentType: string) => JSON_TYPE.test(contentType.trim());

const DECIMAL = /^\d+$/;

/**
 * POST/PATCH bodies: JSON only (415), parsable (400 invalid_json), an object nested at most
 * `MAX_BODY_DEPTH` levels (400 invalid_field), at most `limit` bytes (413). A client that
 * hangs up is `ClientClosed`.
 */
export async function readJsonBody(
  c: AppContext,
  limit = MAX_BODY_BYTES,
  optional = false,
): Promise<Record<string, unknown>> {
  const body = await readJson(c, limit, optional);
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw invalidField("body", "The body must be a JSON object.");
  }
  return body as Record<string, unknown>;
}

/**
 * A body that may be left out: none (no bytes, however framed: a declared length of 0, or
 * an empty chunked one, which HTTP/2 proxies send), with no type or a JSON one (clients
 * send their usual `Content-Type: application/json` either way), is `{}`; else as
 * `readJsonBody`.
 */
export const optionalJsonBody = (c: AppContext, limit = MAX_BODY_BYTES) =>
  readJsonBody(c, limit, true);

/** A body that is a JSON array (a set replaced whole), with the same rules otherwise. */
export async function readJsonArrayBody(c: AppContext, limit = MAX_BODY_BYTES): Promise<unknown[]> {
  const body = await readJson(c, limit);
  if (!Array.isArray(body)) throw invalidField("body", "The body must be a JSON array.");
  return body;
}

/**
 * A transfer coding other than chunked (`Transfer-Encoding: gzip, chunked`) is refused, as
 * Bun's parser refuses it before the app; Deno's passed the body on still compressed.
 */
export function refuseTransferCodings(transferEncoding: string | undefined): void {
  if (transferEncoding === undefined || /^\s*chunked\s*$/i.test(transferEncoding)) return;
  throw new ApiError(
    "json_required",
    `Send the body as it is or chunked: Transfer-Encoding "${echo(transferEncoding)}" is not supported.`,
  );
}

/** A compressed body (`Content-Encoding: gzip`) would be read as JSON text, or its JSON applied though the header said otherwise. */
export function refuseContentCodings(contentEncoding: string | undefined): void {
  if (contentEncoding === undefined || /^[\s,]*(identity[\s,]*)*$/i.test(contentEncoding)) return;
  throw new ApiError(
    "json_required",
    `Send the body uncompressed: Content-Encoding "${echo(contentEncoding)}" is not supported.`,
  );
}

/** Any JSON value of at most `limit` bytes, sent as application/json; `{}` for no bytes if `optional`. */
async function readJson(c: AppContext, limit: number, optional = false): Promise<unknown> {
  const type = c.req.header("content-type");
  const untypedMayBeEmpty = optional && type === undefined;
  if (!untypedMayBeEmpty && !isJsonType(type ?? "")) {
    throw fixedError("json_required");
  }
  refuseTransferCodings(c.req.header("transfer-encoding"));
  refuseContentCodings(c.req.header("content-encoding"));
  const length = c.req.header("content-length");
  const declared = Number(length ?? 0);
  // Untyped, only no body is taken: its first byte is the 415, before any size is judged.
  const most = untypedMayBeEmpty ? 0 : limit;
  const overMost = (headers: Record<string, string> = {}) =>
    untypedMayBeEmpty ? fixedError("json_required", {}, headers) : tooLarge(limit, headers);
  if (declared > most) throw overMost();
  // A body with a declared length (at most the limit, and Bun reads exactly that much) is
  // read in one piece; only a chunked one is streamed, counting bytes as they arrive (the
  // stream reader cost ~8% of a PATCH).
  const sized =
    length !== undefined && DECIMAL.test(length) && c.req.header("transfer-encoding") === undefined;
  // A chunked body may be as large as the limit.
  const release = bodiesInFlight.take(sized ? declared : most, bodyHolder(c));
  let bytes: Uint8Array;
  try {
    bytes = sized
      ? new Uint8Array(await c.req.raw.arrayBuffer())
      : await readLimited(c.req.raw.body, most, overMost);
  } catch (error) {
    // Our own 413 aside, a body that cannot be read is one the client stopped sending (Bun
    // also aborts the request's signal; Deno's read fails with the signal untouched).
    if (error instanceof ApiError) throw error;
    throw new ClientClosed("the client closed the connection before sending its body");
  } finally {
    release();
  }
  if (optional && bytes.length === 0) return {};
  let body: unknown;
  try {
    body = JSON.parse(STRICT_UTF8.decode(bytes));
  } catch {
    throw fixedError("invalid_json");
  }
  if (nestedDeeperThan(bytes, MAX_BODY_DEPTH)) {
    throw invalidField(
      "body",
      `The body is nested more than ${MAX_BODY_DEPTH} levels deep; send flatter JSON.`,
    );
  }
  return body;
}

/** Who sends a body, for its share of the budget: the store key or the host key. */
function bodyHolder(c: AppContext): string {
  const key = c.get("key");
  if (key) return `${c.get("store").slug}:${key.id}`;
  return `host:${c.get("hostKey")?.id}`;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** Whether valid JSON text nests objects and arrays more than `limit` levels deep (one pass, no recursion). */
function nestedDeeperThan(json: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const byte = json[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
  }
  return false;
}

/**
 * Reads a body stream of at most `limit` bytes (chunked bodies have no length). Past the
 * limit the rest is thrown away as it arrives (src/http/unread-body.ts) and `tooLarge`
 * is thrown, told to close the connection when the rest was too much to wait for.
 */
export async function readLimited(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
  tooLarge: (headers: Record<string, string>) => ApiError,
): Promise<Uint8Array> {
  if (!stream) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    size += next.value.byteLength;
    if (size > limit) throw tooLarge((await drainRest(reader, size)) ? {} : CLOSE_CONNECTION);
    chunks.push(next.value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** A 413 for a body over `limit`; a body not read at all is drained or closed on by src/server.ts. */
const tooLarge = (limit: number, headers: Record<string, string> = {}) =>
  new ApiError("payload_too_large", tooLargeMessage(limit), {}, headers);
