import { describe, expect, test } from "bun:test";
import { DRAIN_LIMIT_BYTES, drainBody, drainRest } from "./unread-body";

const streamOf = (chunks: Uint8Array[], end = true) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      if (end) controller.close();
    },
  });

const post = (body: ReadableStream<Uint8Array> | string, headers: Record<string, string> = {}) =>
  new Request("http://shop1.test/api/v1/products", { method: "POST", body, headers });

describe("a body answered unread", () => {
  test("is read to its end and thrown away up to the limit", async () => {
    expect(await drainBody(post("x".repeat(200_000)))).toBe(true);
    const chunk = new Uint8Array(1024 * 1024);
    expect(await drainBody(post(streamOf(Array(8).fill(chunk))))).toBe(true);
    expect(await drainBody(post(streamOf(Array(9).fill(chunk))))).toBe(false);
  });

  test("declared over the limit, it is not read at all", async () => {
    const declared = post("x", { "Content-Length": String(DRAIN_LIMIT_BYTES + 1) });
    expect(await drainBody(declared)).toBe(false);
    expect(declared.bodyUsed).toBe(false);
  });

  test("one that stops arriving is given up after the time allowed, even if its read never ends", async () => {
    const stalled = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
    expect(await drainRest(stalled.getReader(), 0, 50)).toBe(false);
  });

  test("one locked by a reader left behind is not drained", async () => {
    const request = post(streamOf([new Uint8Array(10)], false));
    request.body?.getReader();
    expect(await drainBody(request)).toBe(false);
  });
});
