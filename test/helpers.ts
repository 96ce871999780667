import { afterAll, expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseServeConfig, type ServeFlags } from "../src/config";
import { loadFixture } from "../src/load/load";
import { Logger } from "../src/log";
import { startServer } from "../src/server";
import { expectDocumented } from "./contract";
import { spawnServer } from "./process";
import { libsqlLocationFor, TEST_LIBSQL, TEST_LIBSQL_REPLICAS } from "./sqld";

/** Pinned keys of the standard test fixture (`svc_sk_` + 40 alphanumerics). */
export const KEYS = {
  all: "svc_sk_testAllWrite00000000000000000000000001",
  read: "svc_sk_testAllRead000000000000000000000000002",
  none: "svc_sk_testNoAccess00000000000000000000000003",
  other: "svc_sk_testOtherStore0000000000000000000000004",
} as const;

export const ALL_WRITE = { products: "write", orders: "write", customers: "write", leads: "write" };
export const ALL_READ = { products: "read", orders: "read", customers: "read", leads: "read" };

export const STATUSES = [
  { id: 1, name: "New" },
  { id: 2, name: "Awaiting payment" },
  { id: 3, name: "Shipped" },
  { id: 7, name: "Delivered" },
];

/** A store for a fixture with sensible defaults; pass records and overrides per test. */
export function testStore(overrides: Record<string, unknown> = {}) {
  return {
    slug: "shop1",
    name: "Test Shop",
    domain: "shop1.test",
    plan: "growth",
    ownerEmail: "owner@shop1.test",
    settings: { manualCustomerApproval: false, notifyStatusChange: true, registration: true },
    orderStatuses: STATUSES,
    keys: [
      { name: "all", secret: KEYS.all, permissions: ALL_WRITE },
      { name: "read", secret: KEYS.read, permissions: ALL_READ },
      { name: "none", secret: KEYS.none, permissions: {} },
    ],
    ...overrides,
  };
}

/** A second store, for isolation tests. */
export function otherStore(overrides: Record<string, unknown> = {}) {
  return testStore({
    slug: "shop2",
    name: "Other Shop",
    domain: "shop2.test",
    ownerEmail: "owner@shop2.test",
    keys: [{ name: "other", secret: KEYS.other, permissions: ALL_WRITE }],
    ...overrides,
  });
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface RequestOptions {
  method?: string;
  host?: string;
  key?: string | null;
  body?: unknown;
  /** Raw body text (sent as is). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  dataDir: string;
  request(path: string, options?: RequestOptions): Promise<ApiAnswer>;
  stop(): Promise<void>;
}

export function tempDir(prefix = "storeapi-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A maker of temporary directories that are all removed when the test file is done. */
export function scratchDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = tempDir(prefix);
    dirs.push(dir);
    return dir;
  };
}

/** Sends one request to a server; defaults: host shop1.test, the all-access key, JSON body. */
export async function send(
  baseUrl: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiAnswer> {
  const headers: Record<string, string> = {
    Host: options.host ?? "shop1.test",
    ...options.headers,
  };
  const key = options.key === undefined ? KEYS.all : options.key;
  if (key !== null && !("Authorization" in headers) && !("X-Api-Key" in headers))
    headers.Authorization = `Bearer ${key}`;
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  return readAnswer(
    await fetch(baseUrl + path, { method: options.method ?? "GET", headers, body }),
  );
}

/** A response as tests look at it: status, headers, text, and the text parsed as JSON (undefined when it is not). */
export async function readAnswer(response: Response): Promise<ApiAnswer> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/**
 * Loads a fixture into a fresh temp data dir and starts the real server on a loopback
 * port (plain HTTP allowed unless flags say otherwise): in this process, or as its own
 * process when STOREAPI_BIN names a binary to test (test/process.ts).
 */
export async function startTestServer(
  options: { stores?: unknown[]; flags?: ServeFlags; dataDir?: string } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir();
  const location = TEST_LIBSQL ? await libsqlLocationFor(dataDir) : undefined;
  if (options.stores) await loadFixture(location ?? dataDir, { stores: options.stores });
  const config = {
    ...parseServeConfig(
      {
        listen: "127.0.0.1:0",
        "allow-http": true,
        "log-level": "silent",
        "libsql-replicas": TEST_LIBSQL_REPLICAS,
        ...options.flags,
      },
      dataDir,
      {},
    ),
    location,
  };
  const server = process.env.STOREAPI_BIN
    ? await spawnedServer(dataDir, options.flags ?? {})
    : await startServer(config, new Logger(process.env.TEST_LOG === "1" ? "info" : "silent"));
  return {
    url: server.url,
    dataDir,
    // Every answer a black-box test receives is checked against the OpenAPI document.
    request: async (path, requestOptions) => {
      const answer = await send(server.url, path, requestOptions);
      expectDocumented(requestOptions?.method ?? "GET", path, answer);
      return answer;
    },
    stop: async () => {
      await server.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `storeapi serve` as a process with the same flags; stopped with SIGTERM. */
async function spawnedServer(dataDir: string, flags: ServeFlags) {
  const { "allow-http": allowHttp = true, ...rest } = flags;
  const args = Object.entries(rest).flatMap(([flag, value]) =>
    value === true ? [`--${flag}`] : value ? [`--${flag}`, value] : [],
  );
  const server = await spawnServer(dataDir, args, {}, { allowHttp: allowHttp !== false });
  return { url: server.url, stop: () => server.signal("SIGTERM").then(() => {}) };
}

/** `"<status> <error code>"`, or `"<status> ok"` for a success: one value to compare. */
export const statusAndCode = (answer: ApiAnswer): string =>
  `${answer.status} ${answer.json?.error?.code ?? "ok"}`;

/** Asserts-free accessor for an error envelope's code (undefined when not an error). */
export const errorCode = (answer: ApiAnswer): string | undefined => answer.json?.error?.code;

/**
 * A hostile request's answer: under 500, JSON, an envelope whose error has a code and a
 * sentence, no trace of SQL or a stack, and a request id (robustness tests).
 */
export function expectEnvelope(answer: ApiAnswer, context: string): void {
  const where = `${context} → ${answer.status} ${answer.text.slice(0, 200)}`;
  expect(answer.status, where).toBeLessThan(500);
  expect(answer.headers.get("content-type"), where).toBe("application/json; charset=utf-8");
  expect(typeof answer.json?.ok, where).toBe("boolean");
  if (answer.json.ok === false) {
    expect(typeof answer.json.error.code, where).toBe("string");
    expect(answer.json.error.message, where).toMatch(/\.$/);
    expect(answer.text, where).not.toMatch(/SQLITE|\n\s+at |\.ts:\d+|"stack"/i);
  }
  expect(answer.headers.get("x-request-id"), where).toBeTruthy();
}

/**
 * Polls `check` until it holds, for up to `timeoutMs` (generous: these machines are shared
 * and slow at times): whether it came true. For what the server does on its own clock.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<boolean> {
  for (const endAt = Date.now() + timeoutMs; Date.now() < endAt; await Bun.sleep(50))
    if (await check()) return true;
  return check();
}

/** A command's stderr without its progress lines (`backup: stores copied: 1/2`), which depend on its speed. */
export const withoutProgress = (stderr: string) => stderr.replace(/^[^\n]*: \d+\/\d+\n/gm, "");
