import type { Runtime } from "./runtime";

/** The part of Deno's global this file uses (the project type-checks against Bun's types). */
declare const Deno: {
  serve(
    options: { hostname: string; port: number; cert?: string; key?: string; signal: AbortSignal; onListen(): void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): { addr: { port: number }; finished: Promise<void>; shutdown(): Promise<void> };
};

/**
 * Deno (scripts/storeapi-deno runs the sources from node_modules). Deno.serve has no body
 * size backstop (the app's own limit applies); its Worker cannot be unreferenced (the
 * server's stop ends the process); `gc` exists only with `--v8-flags=--expose-gc`.
 */
export const denoRuntime: Runtime = {
  name: "deno",

  serve({ hostname, port, tls, fetch }) {
    const secure = Boolean(tls);
    // Aborting it closes the server and every connection (Deno's only way to force them shut).
    const closeAll = new AbortController();
    const server = Deno.serve({ hostname, port, ...tls, signal: closeAll.signal, onListen() {} }, (request, info) =>
      fetch(request, {
        get peerIp() {
          return info.remoteAddr.hostname;
        },
        tls: secure,
      }),
    );
    return {
      port: server.addr.port,
      stop(closeActiveConnections) {
        if (!closeActiveConnections) return server.shutdown();
        closeAll.abort();
        return server.finished;
      },
    };
  },

  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),

  collectGarbage: () => (globalThis as { gc?: () => void }).gc?.(),

  startWorker: (path) => new Worker(new URL(`../${path}`, import.meta.url).href, { type: "module" }),
};
