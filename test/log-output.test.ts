import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadFixture } from "../src/load/load";
import { Logger, type LogOutput, MAX_HELD_LOG_BYTES } from "../src/log";
import { KEYS, send, tempDir, testStore } from "./helpers";
import { spawnServer } from "./process";
import { testLocation } from "./sqld";

/** A stdout whose reader has stopped until `drain()`: it takes every chunk and says it is full. */
class StalledOutput implements LogOutput {
  chunks: string[] = [];
  private listeners: Array<() => void> = [];
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return false;
  }
  once(_event: "drain", listener: () => void): void {
    this.listeners.push(listener);
  }
  drain(): void {
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }
  lines(): Array<Record<string, unknown>> {
    return this.chunks.flatMap((chunk) =>
      chunk
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line)),
    );
  }
}

// Bun held every line written to a full pipe: a server grew by 150 MB with its log reader stopped.
test("while stdout is not read, at most MAX_HELD_LOG_BYTES wait; the rest are counted and said when it drains", () => {
  const out = new StalledOutput();
  const logger = new Logger("info", out);
  logger.info("first");
  logger.flush();
  expect(out.chunks).toHaveLength(1);
  const padding = "p".repeat(1000);
  const lines = Math.ceil((2 * MAX_HELD_LOG_BYTES) / 1000);
  for (let i = 0; i < lines; i++) logger.info("request", { padding, i });
  logger.flush(); // waits for the drain: nothing more is written
  expect(out.chunks).toHaveLength(1);
  out.drain();
  expect(out.chunks).toHaveLength(2);
  expect(out.chunks[1].length).toBeLessThanOrEqual(MAX_HELD_LOG_BYTES + 200);
  const written = out.lines();
  const requests = written.filter((line) => line.msg === "request");
  expect(requests[0].i).toBe(0);
  expect(requests.at(-1)?.i).toBe(requests.length - 1);
  const dropped = written.find((line) => line.msg === "log lines dropped: stdout was not read");
  expect(dropped?.level).toBe("warn");
  expect(dropped?.count).toBe(lines - requests.length);
  // Drained again, the next lines flow as before.
  out.drain();
  logger.info("after");
  logger.flush();
  expect(out.lines().at(-1)?.msg).toBe("after");
});

// Under Deno a write to a full pipe waited: the server stopped answering with its log unread.
test("a server whose stdout nobody reads goes on answering", async () => {
  const dataDir = tempDir("storeapi-log-stall-");
  await loadFixture(await testLocation(dataDir), { stores: [testStore()] });
  const server = await spawnServer(dataDir, ["--rate-limit", "100000"], {}, { readLog: false });
  try {
    // ~600-byte log lines: far more than a pipe holds (64 KiB).
    const path = `/api/v1/products?limit=1&q=${"x".repeat(500)}`;
    for (let round = 0; round < 40; round++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => send(server.url, path, { key: KEYS.all })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(400));
    }
    const health = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(20_000) });
    expect(health.status).toBe(200);
  } finally {
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 120_000);
