import type { LogOutput } from "../log";
import { LIBC, raiseOpenFilesLimitWith } from "./open-files";
import { type Runtime, unexpectedError } from "./runtime";

/** The part of Deno's global this file uses (the project type-checks against Bun's types). */
declare const Deno: {
  version: { deno: string };
  stdout: { write(bytes: Uint8Array): Promise<number> };
  serve(
    options: {
      hostname: string;
      port: number;
      cert?: string;
      key?: string;
      onListen(): void;
      onError(error: unknown): Response;
    },
    handler: (
      request: Request,
      info: { remoteAddr: { hostname: string } },
    ) => Response | Promise<Response>,
  ): { addr: { port: number }; finished: Promise<void>; shutdown(): Promise<void> };
  dlopen(
    path: string,
    symbols: Record<
      "getrlimit" | "setrlimit",
      { parameters: readonly ["i32", "buffer"]; result: "i32" }
    >,
  ): {
    symbols: Record<"getrlimit" | "setrlimit", (resource: number, limit: BigUint64Array) => number>;
    close(): void;
  };
};

/**
 * Deno's `process.stdout.write` waits while a pipe is full: a log reader that stops would
 * stop the server. Chunks go out one at a time in the background instead (the Logger holds
 * what comes meanwhile, bounded); a reader that is gone drops them.
 */
class DenoStdout implements LogOutput {
  private writing: Promise<void> = Promise.resolve();
  private drained: Array<() => void> = [];
  private readonly encoder = new TextEncoder();

  write(chunk: string): boolean {
    this.writing = this.writeAll(this.encoder.encode(chunk)).then(() => {
      const listeners = this.drained;
      this.drained = [];
      for (const listener of listeners) listener();
    });
    return false;
  }

  once(_event: "drain", listener: () => void): void {
    this.drained.push(listener);
  }

  settled(): Promise<void> {
    return this.writing;
  }

  private async writeAll(bytes: Uint8Array): Promise<void> {
    try {
      while (bytes.length > 0) bytes = bytes.subarray(await Deno.stdout.write(bytes));
    } catch {
      // No reader (EPIPE): the lines have nowhere to go.
    }
  }
}

/**
 * The request with a `Host` header. Over HTTP/2, which Deno speaks on a TLS port that
 * offers it (and to a cleartext client that starts with it), the host comes as
 * `:authority`, which Deno puts in the URL only; stores are chosen by `Host`.
 */
function withHostHeader(request: Request): Request {
  if (request.headers.has("host")) return request;
  const headers = new Headers(request.headers);
  headers.set("host", new URL(request.url).host);
  return new Request(request, { headers });
}

/** How long a server that could not accept a connection waits before it listens again. */
const RELISTEN_PAUSE_MS = 500;

/**
 * Deno (scripts/storeapi-deno runs the sources from node_modules). Deno.serve has no body
 * size backstop (the app's own limit applies); its Worker cannot be unreferenced (the
 * server's stop ends the process); `gc` exists only with `--v8-flags=--expose-gc`.
 */
export const denoRuntime: Runtime = {
  name: "deno",
  fetchSetsHost: false,

  logOutput: () => new DenoStdout(),

  get version() {
    return `Deno ${Deno.version.deno}`;
  },

  serve({ hostname, port, tls, fetch }) {
    const secure = Boolean(tls);
    const listen = (at: number) =>
      Deno.serve(
        { hostname, port: at, ...tls, onListen() {}, onError: unexpectedError },
        (request, info) =>
          fetch(withHostHeader(request), {
            get peerIp() {
              return info.remoteAddr.hostname;
            },
            tls: secure,
          }),
      );
    let server = listen(port);
    const listening = server.addr.port;
    let stopping = false;
    // Deno's server stops for good when it cannot accept a connection (out of descriptors:
    // EMFILE), and the rejection would end the process: a client's idle connections killed
    // it. It listens again on the same address once it can, as Bun keeps accepting.
    const relistenAfter = (failed: typeof server) =>
      failed.finished.catch(async () => {
        while (!stopping) {
          await new Promise((resolve) => setTimeout(resolve, RELISTEN_PAUSE_MS));
          if (stopping) return;
          try {
            server = listen(listening);
            relistenAfter(server);
            return;
          } catch {
            // still out of descriptors: try again after the pause
          }
        }
      });
    relistenAfter(server);
    let shutdown: Promise<void> | undefined;
    return {
      port: listening,
      // Deno cannot close connections a shutdown is waiting for (aborting its `signal` then
      // throws inside Deno 2.9): a forced stop stops waiting, and the process exit closes them.
      stop: (closeActiveConnections) => {
        stopping = true;
        if (closeActiveConnections) return Promise.resolve();
        shutdown ??= server.shutdown();
        return shutdown;
      },
    };
  },

  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),

  collectGarbage: () => (globalThis as { gc?: () => void }).gc?.(),

  collectYoungGarbage: () =>
    (globalThis as { gc?: (options: { type: "minor" }) => void }).gc?.({ type: "minor" }),

  startWorker: (path) =>
    new Worker(new URL(`../${path}`, import.meta.url).href, { type: "module" }),

  async raiseOpenFilesLimit() {
    try {
      const rlimit = { parameters: ["i32", "buffer"], result: "i32" } as const;
      const libc = Deno.dlopen(LIBC, { getrlimit: rlimit, setrlimit: rlimit });
      try {
        return raiseOpenFilesLimitWith(libc.symbols);
      } finally {
        libc.close(); // a method: called on its library
      }
    } catch {
      return null; // no --allow-ffi, or no libc by that name
    }
  },
};
