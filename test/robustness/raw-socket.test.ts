import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { loadFixture } from "../../src/load/load";
import { KEYS, tempDir, testStore } from "../helpers";
import { type ServerProcess, spawnServer } from "../process";
import { testLocation } from "../sqld";

/**
 * What fetch() hides (issue 13, items 8, 14, 17): raw HTTP/1.1 over a TCP socket to a
 * real server process, whose JSON log lines are read from its stdout.
 */

const dataDir = tempDir("storeapi-raw-");
beforeAll(async () => loadFixture(await testLocation(dataDir), { stores: [testStore()] }));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Sends one request and reads until the server closes the connection (`Connection: close`). */
async function exchange(url: string, head: string): Promise<string> {
  const socket = await open(url);
  return new Promise((resolve) => {
    let text = "";
    socket.on("data", (chunk) => (text += chunk));
    socket.on("close", () => resolve(text));
    socket.write(`${head}\r\nConnection: close\r\n\r\n`);
  });
}

const contentLength = (answer: string) => /\r\ncontent-length: *(\d+)/i.exec(answer)?.[1];

/** A request that declares 1000 bytes of body and sends 10 of them. */
const SLOW_BODY =
  "POST /api/v1/customers HTTP/1.1\r\nHost: shop1.test\r\n" +
  `Authorization: Bearer ${KEYS.all}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email":"`;

const logLines = (server: ServerProcess) =>
  server
    .stdout()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));

/** Waits until `done` holds, for at most 10 s. */
async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !done(); i++) await Bun.sleep(100);
}

describe("over a raw socket", () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await spawnServer(dataDir);
  });
  afterAll(() => server.signal("SIGKILL"));

  test("HEAD sends the Content-Length GET's body has, and no body", async () => {
    for (const path of ["/healthz", "/api/v1/orders", "/api/v1/nothing-here", "/api/v1/docs"]) {
      const headers = `Host: shop1.test\r\nAuthorization: Bearer ${KEYS.all}`;
      const get = await exchange(server.url, `GET ${path} HTTP/1.1\r\n${headers}`);
      const head = await exchange(server.url, `HEAD ${path} HTTP/1.1\r\n${headers}`);
      const body = get.slice(get.indexOf("\r\n\r\n") + 4);
      expect(contentLength(get)).toBe(String(Buffer.byteLength(body)));
      expect(contentLength(head)).toBe(contentLength(get));
      expect(head.endsWith("\r\n\r\n")).toBe(true);
    }
  }, 20_000);

  test("a client that declares a body (sized or chunked) and hangs up is logged as 499, with no 500 and no error line", async () => {
    const chunked = SLOW_BODY.replace("Content-Length: 1000", "Transfer-Encoding: chunked").replace(
      '\r\n\r\n{"email":"',
      '\r\n\r\na\r\n{"email":"\r\n',
    );
    for (const request of [SLOW_BODY, chunked]) {
      const socket = await open(server.url);
      socket.write(request);
      await Bun.sleep(200);
      socket.destroy();
    }
    const aborted = (line: Record<string, unknown>) =>
      line.status === 499 && line.method === "POST" && line.path === "/api/v1/customers";
    await waitUntil(() => logLines(server).filter(aborted).length === 2);
    const lines = logLines(server);
    expect(lines.filter(aborted)).toHaveLength(2);
    expect(lines.filter((line) => line.status === 500 || line.level === "error")).toEqual([]);
  }, 20_000);
});

test("SIGTERM with slow-body clients connected exits 0 within the 5 s grace (plus a margin)", async () => {
  const server = await spawnServer(dataDir);
  const sockets = await Promise.all(Array.from({ length: 3 }, () => open(server.url)));
  for (const socket of sockets) {
    socket.on("error", () => {});
    socket.write(SLOW_BODY);
  }
  // A byte every 300 ms: the connections never go idle, so only the grace can end them.
  const drip = setInterval(() => {
    for (const socket of sockets) if (!socket.destroyed) socket.write("a");
  }, 300);
  try {
    await Bun.sleep(300);
    const started = performance.now();
    server.proc.kill("SIGTERM");
    const exit = await Promise.race([
      server.proc.exited,
      Bun.sleep(20_000).then(() => "still running"),
    ]);
    const seconds = (performance.now() - started) / 1000;
    if (exit === "still running") server.proc.kill("SIGKILL");
    expect(exit).toBe(0);
    expect(seconds).toBeGreaterThan(4.5);
    expect(seconds).toBeLessThan(10);
    expect(
      logLines(server).filter((line) => line.status === 500 || line.level === "error"),
    ).toEqual([]);
  } finally {
    clearInterval(drip);
    for (const socket of sockets) socket.destroy();
  }
}, 40_000);
