import type { LogOutput } from "../log";
import type { OpenFilesLimit } from "./open-files";

/**
 * The runtime edge: the few things the program needs from Bun or Deno beyond web
 * standards and `node:` modules. `bun.ts` and `deno.ts` implement it; the entry point
 * (src/main.ts for Bun, src/main-deno.ts for Deno) chooses one with `useRuntime` before
 * anything runs, and the code asks `runtime()` for it.
 */
export interface Runtime {
  readonly name: "bun" | "deno";
  /** The runtime and its version, e.g. "Bun 1.4.5", for `storeapi --version`. */
  readonly version: string;
  /**
   * Whether `fetch` sends a `Host` header the program sets. sqld picks a namespace by it
   * (src/db/location.ts); Deno's fetch replaces it with the URL's host.
   */
  readonly fetchSetsHost: boolean;
  /** Starts an HTTP(S) server listening at once; throws when the address is taken. */
  serve(options: ServeOptions): HttpServer;
  sleep(ms: number): Promise<void>;
  /** A full garbage collection, where the runtime offers one (else nothing). */
  collectGarbage(): void;
  /** A collection of the young generation only (short-lived objects): a short pause. */
  collectYoungGarbage(): void;
  /**
   * Starts a background module Worker from `path` (relative to src/, e.g.
   * "db/checkpoint-worker.ts"), found in the sources or embedded in the binary. Small and
   * never keeping the process alive where the runtime allows.
   */
  startWorker(path: string): Worker;
  /**
   * Raises the soft open-files limit to the hard one (src/runtime/open-files.ts) and returns
   * the limit in force; null where libc cannot be reached (then nothing changes).
   */
  raiseOpenFilesLimit(): Promise<OpenFilesLimit | null>;
  /** Where a server's log lines go: stdout, written so that a reader that stops holds up nothing. */
  logOutput(): LogOutput;
}

/** What the server tells the app about each request's connection. */
export interface Connection {
  /** Address of the TCP peer (the server reads it only when it is asked for: a getter). */
  peerIp: string;
  /** Whether the connection itself is TLS. */
  tls: boolean;
  /**
   * Aborted when the client hangs up before its answer (Bun; Deno's request signal does not
   * tell a hang-up from a delivered answer, so it gives none).
   */
  hungUp?: AbortSignal;
  /** The id the API's app gave a request it hands on to the admin screen's app. */
  requestId?: string;
}

export interface ServeOptions {
  hostname: string;
  port: number;
  /** PEM texts; plain HTTP without. */
  tls?: { cert: string; key: string };
  /** A backstop on body size where the runtime has one (the app enforces its own limit). */
  maxRequestBodySize: number;
  fetch(request: Request, connection: Connection): Response | Promise<Response>;
}

export interface HttpServer {
  /** The port listened on (the one chosen when asked for port 0). */
  readonly port: number;
  /**
   * No new connections; resolves when requests in flight have been answered. With
   * `closeActiveConnections`, closes every connection now instead.
   */
  stop(closeActiveConnections?: boolean): Promise<void>;
}

let chosen: Runtime | undefined;

/** Called once by the entry point (and by the test preload). */
export function useRuntime(choice: Runtime): void {
  chosen = choice;
}

export function runtime(): Runtime {
  if (!chosen) throw new Error("no runtime chosen: the entry point calls useRuntime() first");
  return chosen;
}

/**
 * What a server answers when its handler throws after all (the app renders its own
 * errors; this is the edge's last resort): a bare 500 that shows nothing of the error.
 */
export const unexpectedError = (): Response =>
  new Response("internal server error\n", {
    status: 500,
    headers: { "Content-Type": "text/plain; charset=utf-8" },
  });
