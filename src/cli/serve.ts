import { parseServeConfig, SERVE_FLAGS, type ServeFlags } from "../config";
import { startServer, type RunningServer } from "../server";
import { dataDirOf, parseCommand } from "./args";
import { UsageError } from "./errors";

export const SERVE_OPTIONS = Object.fromEntries(
  SERVE_FLAGS.map((flag) => [flag, { type: flag === "allow-http" ? "boolean" : "string" }]),
) as Record<(typeof SERVE_FLAGS)[number], { type: "string" | "boolean" }>;

export function serveConfigFrom(argv: string[]) {
  const { values, positionals } = parseCommand(argv, SERVE_OPTIONS);
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  try {
    return parseServeConfig(values as ServeFlags, dataDirOf(values));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Stops gracefully on SIGTERM/SIGINT and exits 0. */
export function stopOnSignals(server: RunningServer): void {
  const stop = () => {
    server.logger.info("stopping");
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

export async function serveCommand(argv: string[]): Promise<void> {
  const config = serveConfigFrom(argv);
  const server = await startServer(config);
  // Before "listening": whoever waits for that line may signal at once.
  stopOnSignals(server);
  if (config.allowHttp) server.logger.warn("plain HTTP is allowed (--allow-http): for development only");
  server.logger.info("listening", {
    url: server.url,
    dataDir: config.dataDir,
    openFilesLimit: server.openFilesLimit,
    maxOpenStores: server.maxOpenStores,
  });
  server.logger.flush();
}
