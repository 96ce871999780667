import { edenGC } from "bun:jsc";
import { LIBC, raiseOpenFilesLimitWith } from "./open-files";
import { type Runtime, unexpectedError } from "./runtime";

/**
 * Bun. In the compiled binary (`bun build --compile`, scripts/build.ts) every module's
 * `import.meta.url` is the bundle's root under `/$bunfs/`, and worker entry points sit
 * beside it by their path under src/.
 */
export const bunRuntime: Runtime = {
  name: "bun",
  fetchSetsHost: true,

  // Bun's stdout takes every write and says when it holds too much (`write` is false, then "drain").
  logOutput: () => process.stdout,

  get version() {
    return `Bun ${Bun.version}`;
  },

  serve({ hostname, port, tls, maxRequestBodySize, fetch }) {
    const secure = Boolean(tls);
    const server = Bun.serve({
      hostname,
      port,
      tls,
      maxRequestBodySize,
      // A handler that throws gets a bare 500: Bun's development page would show its message.
      development: false,
      // Bun shares the port (SO_REUSEPORT) when not in development: a second server on the
      // same address would start and take half its connections, where it must be refused.
      reusePort: false,
      error: unexpectedError,
      fetch: (request, srv) =>
        fetch(request, {
          get peerIp() {
            return srv.requestIP(request)?.address ?? "unknown";
          },
          get hungUp() {
            return request.signal;
          },
          tls: secure,
        }),
    });
    return {
      port: server.port ?? port,
      stop: (closeActiveConnections) => server.stop(closeActiveConnections),
    };
  },

  sleep: (ms) => Bun.sleep(ms),

  collectGarbage: () => Bun.gc(true),

  collectYoungGarbage: () => edenGC(),

  startWorker(path) {
    const compiled = import.meta.url.includes("$bunfs");
    const url = new URL(compiled ? `./${path}` : `../${path}`, import.meta.url);
    // smol: a small heap; ref false: the worker never keeps the process alive.
    return new Worker(url.href, { smol: true, ref: false });
  },

  async raiseOpenFilesLimit() {
    try {
      // Imported here, not at the top: only this needs it.
      const { dlopen, FFIType, ptr } = await import("bun:ffi");
      const rlimit = { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } as const;
      const { symbols, close } = dlopen(LIBC, { getrlimit: rlimit, setrlimit: rlimit });
      try {
        return raiseOpenFilesLimitWith({
          getrlimit: (resource, limit) => symbols.getrlimit(resource, ptr(limit)),
          setrlimit: (resource, limit) => symbols.setrlimit(resource, ptr(limit)),
        });
      } finally {
        close();
      }
    } catch {
      return null;
    }
  },
};
