import { readFileSync } from "node:fs";
import { createApp, type AppDeps } from "./app";
import type { ServeConfig } from "./config";
import { Platform } from "./db/platform";
import { StorePool } from "./db/pool";
import { AuthFailures, DEFAULT_FAILURE_POLICY } from "./http/auth-failures";
import { KeyedQueue } from "./http/idempotency";
import { RateLimiter } from "./http/rate-limit";
import { KeyCache } from "./keys/cache";
import { KeyUsage } from "./keys/usage";
import { errorFields, Logger, type ReportError } from "./log";
import { MailWorker } from "./mail/worker";
import { docsHtml, openApiDocument } from "./openapi";
import { StoreRegistry } from "./registry";
import { runtime } from "./runtime/runtime";

export interface RunningServer {
  url: string;
  port: number;
  logger: Logger;
  /** Graceful stop: no new connections, requests in flight finish, mail flushed, databases closed. */
  stop(): Promise<void>;
}

export async function startServer(config: ServeConfig, logger = new Logger(config.logLevel)): Promise<RunningServer> {
  const platform = await Platform.open(config.dataDir);
  const reportError: ReportError = (message, error) => logger.error(message, errorFields(error));
  const registry = new StoreRegistry(platform, config.platformDomain, reportError);
  await registry.load();
  registry.watch();
  const pool = new StorePool(config.dataDir);
  pool.startCheckpoints(1000, reportError);
  const mail = new MailWorker({ pool, registry, logger, smtp: config.smtp, mailDir: config.mailDir, mailFrom: config.mailFrom });
  registry.onStoreChange((previous, next) => {
    if (!previous || previous.mailVersion !== next.mailVersion) mail.notify(next.slug);
  });

  const deps: AppDeps = {
    registry,
    pool,
    keys: new KeyCache(pool),
    usage: new KeyUsage(pool, reportError),
    rateLimiter: new RateLimiter(config.rateLimit),
    authFailures: new AuthFailures({ ...DEFAULT_FAILURE_POLICY, limit: config.authFailureLimit }),
    allowHttp: config.allowHttp,
    trustProxy: config.trustProxy,
    idempotencyQueue: new KeyedQueue(),
    cursorSecret: await platform.secret(),
    openapi: openApiDocument,
    docsHtml,
    log: logger.enabled("info") ? (entry) => logger.write("info", entry as unknown as Record<string, unknown>) : undefined,
    logError: (requestId, error) => logger.error("request failed", { requestId, ...errorFields(error) }),
    onMailQueued: (slug) => mail.notify(slug),
    now: Date.now,
  };
  const app = createApp(deps);
  const tls = config.tls ? { cert: readFileSync(config.tls.cert, "utf8"), key: readFileSync(config.tls.key, "utf8") } : undefined;
  const server = runtime().serve({
    hostname: config.hostname,
    port: config.port,
    tls,
    // The app answers bodies over 1 MiB with a 413 envelope as it reads them; this is only a backstop.
    maxRequestBodySize: 64 * 1024 * 1024,
    fetch: app.fetch,
  });
  mail.start();
  const scheme = tls ? "https" : "http";
  let stopping: Promise<void> | undefined;
  return {
    url: `${scheme}://${config.hostname.includes(":") ? `[${config.hostname}]` : config.hostname}:${server.port}`,
    port: server.port,
    logger,
    stop: () =>
      (stopping ??= (async () => {
        await server.stop();
        registry.stop();
        await mail.stop();
        await pool.close();
        await platform.close();
        logger.flush();
      })()),
  };
}
