import {
  envName,
  parseServeConfig,
  SERVE_FLAG_HELP,
  SERVE_FLAGS,
  SERVE_SWITCHES,
  type ServeConfig,
  type ServeFlags,
} from "../config";
import { LibsqlLocation, replicasUnreachable } from "../db/location";
import { envVariable } from "../env";
import { type RunningServer, startServer } from "../server";
import { command, dataDirOf, type FlagSpec, locationOf } from "./args";
import { UsageError } from "./errors";

/** serve's (and demo's) flags: config.ts's list, with their help and environment variable. */
export const SERVE_OPTIONS = Object.fromEntries(
  SERVE_FLAGS.map((flag) => {
    const { value, help = "" } = SERVE_FLAG_HELP[flag] ?? {};
    return [
      flag,
      {
        type: SERVE_SWITCHES.has(flag) ? "boolean" : "string",
        value,
        help: `${help}; env ${envName(flag)}`,
      },
    ];
  }),
) as Record<(typeof SERVE_FLAGS)[number], FlagSpec>;

/** The config from flags, else the environment, else `defaults` (demo's), else serve's own. */
export function serveConfigFrom(
  values: ServeFlags,
  dataDir: string,
  defaults: ServeFlags = {},
): ServeConfig {
  const unset = ([flag]: [string, unknown]) =>
    values[flag as keyof ServeFlags] === undefined && envVariable(envName(flag)) === undefined;
  try {
    return parseServeConfig(
      { ...Object.fromEntries(Object.entries(defaults).filter(unset)), ...values },
      dataDir,
    );
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** `--libsql-replicas` needs a libSQL server named by a host name: a usage mistake otherwise. */
export function refuseUnusableReplicas(config: ServeConfig): void {
  if (!config.libsqlReplicas) return;
  if (!(config.location instanceof LibsqlLocation))
    throw new UsageError("--libsql-replicas needs --libsql-url");
  const unreachable = replicasUnreachable(config.location.server.url);
  if (unreachable) throw new UsageError(unreachable);
}

/**
 * Stops gracefully on SIGTERM/SIGINT and exits 0. A signal repeated meanwhile is ignored:
 * `timeout`, a shell's Ctrl-C or a supervisor may send it to the process and its group,
 * and a second one killed the process before its writes and mail were done with.
 */
export function stopOnSignals(server: RunningServer): void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.logger.info("stopping");
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

export const serveCommand = command(
  {
    name: "serve",
    summary: "Serve every store in the data directory until SIGTERM or SIGINT.",
    flags: SERVE_OPTIONS,
  },
  async ({ values }) => {
    const config = { ...serveConfigFrom(values, dataDirOf(values)), location: locationOf(values) };
    refuseUnusableReplicas(config);
    const server = await startServer(config);
    // Before "listening": whoever waits for that line may signal at once.
    stopOnSignals(server);
    if (config.allowHttp)
      server.logger.warn("plain HTTP is allowed (--allow-http): for development only");
    if (config.trustProxy?.trustsAnyone)
      server.logger.warn(
        "--trust-proxy trusts every address: any client can set X-Forwarded-For (its address for the lockout) and X-Forwarded-Proto; list only your proxies",
      );
    const listening = {
      url: server.url,
      dataDir: config.location.describe,
      openFilesLimit: server.openFilesLimit,
      maxOpenStores: server.maxOpenStores,
      ...(server.metricsUrl && { metricsUrl: server.metricsUrl }),
    };
    // With port 0 this line is the only way to learn the address: it is written whatever the log level.
    if (config.port === 0) server.logger.always("listening", listening);
    else server.logger.info("listening", listening);
    server.logger.flush();
  },
);
