import { BodyBudget } from "./body-budget";

/**
 * What happens to a request body the app answered without reading to its end (a 401, a
 * 404, a 413 for a body over the route's limit).
 *
 * Closing the connection at once makes a proxy that is still sending the body (nginx,
 * Caddy) meet a broken pipe and show its client 502 instead of the answer. So up to
 * `DRAIN_LIMIT_BYTES` of a body are read and thrown away, as nginx's own lingering close
 * does, and the connection stays open: a declared length by the runtime after the answer
 * (src/server.ts); a chunked body, or one on a connection that closes after the answer,
 * here before it. A larger body, or one drained here still arriving after `DRAIN_TIME_MS`,
 * is left unread and the connection closed (`CLOSE_CONNECTION`).
 */
export const DRAIN_LIMIT_BYTES = 8 * 1024 * 1024;
export const DRAIN_TIME_MS = 10_000;

/** The bytes of refused bodies being drained at once, here and in `readLimited`. */
const drainsInFlight = new BodyBudget(64 * 1024 * 1024, 64 * 1024 * 1024);

/** The header that has the runtime close the connection instead of reading the rest of a body. */
export const CLOSE_CONNECTION: Record<string, string> = { Connection: "close" };

/** Whether an unread request body was read to its end (and thrown away) within the limits. */
export async function drainBody(request: Request): Promise<boolean> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > DRAIN_LIMIT_BYTES) return false;
  if (!request.body) return true;
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = request.body.getReader();
  } catch {
    return false; // locked by a reader the app left: the runtime closes
  }
  return drainRest(reader, 0, DRAIN_TIME_MS, declared || DRAIN_LIMIT_BYTES);
}

/**
 * Reads the rest of a body after `bytesSoFar` and throws it away; whether it ended within
 * the limits. What is read is garbage until collected: `reserve` bytes of the drains'
 * budget are held meanwhile, and with no room left nothing is read (the caller closes).
 */
export async function drainRest(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  bytesSoFar: number,
  timeMs = DRAIN_TIME_MS,
  reserve = DRAIN_LIMIT_BYTES - bytesSoFar,
): Promise<boolean> {
  const release = drainsInFlight.tryTake(reserve, "drain");
  if (!release) return false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Not only `cancel()`: a runtime's read might not end when its stream is cancelled.
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), timeMs);
  });
  try {
    for (let bytes = bytesSoFar; ; ) {
      const next = await Promise.race([reader.read(), late]);
      if (next === "late") {
        reader.cancel().catch(() => {});
        return false;
      }
      if (next.done) return true;
      bytes += next.value.byteLength;
      if (bytes > DRAIN_LIMIT_BYTES) {
        await reader.cancel().catch(() => {});
        return false;
      }
    }
  } catch {
    return false; // the client hung up
  } finally {
    clearTimeout(timer);
    release();
  }
}
