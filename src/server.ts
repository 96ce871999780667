import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { join } from "node:path";
import { createApp } from "./app";
import type { ServeConfig } from "./config";
import {
  DataDirLock,
  makeDataDirPrivate,
  makePrivateDir,
  nodeId,
  requireDataDir,
} from "./db/data-dir";
import { FileLocation, LibsqlLocation, type Location, storeNamespace } from "./db/location";
import { Platform } from "./db/platform";
import {
  defaultMaxOpenStores,
  FEWEST_OPEN_STORES,
  maxOpenStoresFitting,
  StorePool,
  storeDbPath,
} from "./db/pool";
import { settleCrashedLoadsEvery } from "./db/staging";
import { StoreFileWatch } from "./db/store-file-watch";
import { buildDeps } from "./deps";
import { HealthProbe } from "./health";
import { Housekeeper } from "./housekeeping";
import { AuthFailures, DEFAULT_FAILURE_POLICY } from "./http/auth-failures";
import { KeyedQueue } from "./http/idempotency";
import { RequestsInFlight } from "./http/in-flight";
import { RateLimiter } from "./http/rate-limit";
import { DRAIN_LIMIT_BYTES, drainBody } from "./http/unread-body";
import { errorFields, Logger, type ReportError, requestFailureLog } from "./log";
import { MailWorker } from "./mail/worker";
import { HostKeyCache } from "./manage/host-keys";
import { Metrics, serveMetrics } from "./metrics";
import { docsHtml, openApiDocument } from "./openapi";
import { StoreRegistry } from "./registry";
import { type HttpServer, runtime } from "./runtime/runtime";
import { watchCertificate } from "./tls";
import { waitAtMost } from "./wait";

export interface RunningServer {
  url: string;
  /** Where `/metrics` is served (`--metrics-listen`), or null. */
  metricsUrl: string | null;
  port: number;
  logger: Logger;
  /** The open-files limit in force (null where it could not be read) and the store pool's size. */
  openFilesLimit: number | null;
  maxOpenStores: number;
  /** Graceful stop: no new connections, requests in flight finish, mail flushed (within `STOP_GRACE_MS`), databases closed. */
  stop(): Promise<void>;
}

/**
 * How long a stop waits for requests in flight and then for mail. Connections still open
 * when it is spent (a client sending its body slowly) are closed.
 */
export const STOP_GRACE_MS = 5000;
/** How long a stopping server waits for its last log lines to go out (a stalled reader takes none). */
const LOG_SETTLE_MS = 2000;

const hostPort = (hostname: string, port: number | undefined) =>
  `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;

type ListenFlag = "--listen" | "--metrics-listen";

/** Why an address cannot be listened on, by errno code (Deno's error names beside). */
const LISTEN_REFUSALS: Record<string, (flag: ListenFlag) => string> = {
  EADDRINUSE: (flag) => `is already in use; stop what listens there or pick another ${flag}`,
  EACCES: (flag) =>
    `is not open to this user (ports below 1024 need root or CAP_NET_BIND_SERVICE); pick another ${flag}`,
  EADDRNOTAVAIL: (flag) => `is not an address of this machine; pick another ${flag}`,
  // A host name that does not resolve, or an IP address past 255 (Bun says either).
  EINVAL: (flag) => LISTEN_REFUSALS.ENOTFOUND(flag),
  ENOTFOUND: (flag) =>
    `cannot be listened on: its host is no address this machine has, nor a name that resolves to one; pick another ${flag}`,
};
const DENO_ERROR_CODES: Record<string, string> = {
  AddrInUse: "EADDRINUSE",
  PermissionDenied: "EACCES",
  AddrNotAvailable: "EADDRNOTAVAIL",
};

/** An address that cannot be listened on; `flag` is the setting to change. */
export class CannotListen extends Error {
  constructor(flag: ListenFlag, hostname: string, port: number, code: string) {
    super(`address ${hostPort(hostname, port)} ${LISTEN_REFUSALS[code](flag)}`);
  }
}

/** `--max-open-stores` that the open-files limit cannot hold: stores, then sockets, would fail to open. */
export class TooManyOpenStores extends Error {
  constructor(asked: number, openFilesLimit: number, fitting: number) {
    super(
      `--max-open-stores ${asked} needs more open files than this process may have (${openFilesLimit}, ulimit -n): give at most ${fitting}, or raise the limit`,
    );
  }
}

/**
 * A certificate the checks at start accepted and the runtime's TLS library did not: Deno's
 * (rustls) refuses X.509 version 1 certificates, which `openssl x509 -req` makes without
 * extensions.
 */
export class CertificateRefused extends Error {
  constructor(certFile: string, reason: string) {
    const advice = reason.includes("UnsupportedCertVersion")
      ? "make one with X.509 version 3 extensions"
      : "use an RSA or ECDSA certificate with X.509 version 3 extensions";
    super(
      `--tls-cert: the TLS library refused the certificate in ${certFile} (${reason.slice(0, 200)}); ${advice}`,
    );
  }
}

/**
 * A host name that resolves to nothing is refused before listening: what the runtime says
 * of it varies with the machine's resolver (EINVAL, ENOENT, even EADDRINUSE under Bun).
 */
async function requireResolvable(flag: ListenFlag, hostname: string, port: number) {
  if (isIP(hostname)) return;
  await lookup(hostname).catch(() => {
    throw new CannotListen(flag, hostname, port, "ENOTFOUND");
  });
}

/**
 * An answer given before the request's body was read (a 401, a 404, a 413) leaves a body
 * of up to a few MiB to the runtime, which reads and throws it away after the answer (a
 * proxy still sending it would otherwise meet a broken pipe and show 502); a chunked one,
 * or one whose connection is to close after the answer, is drained here before it, within
 * the same limits (`drainBody`); after a larger one the
 * connection closes, since the runtime would read the rest, however large, to reach the
 * next request. A request without a body passes straight through (no extra promise on the
 * common path).
 */
function closingUnread<C>(
  fetch: (request: Request, connection: C) => Response | Promise<Response>,
) {
  return (request: Request, connection: C): Response | Promise<Response> => {
    const length = request.headers.get("content-length");
    const chunked = request.headers.has("transfer-encoding");
    if (!chunked && (length === null || length === "0")) return fetch(request, connection);
    return Promise.resolve(fetch(request, connection)).then(async (response) => {
      if (request.bodyUsed) return response;
      // Asked to close (nginx's default to its upstreams), the runtime would not read it.
      const closes = /\bclose\b/i.test(request.headers.get("connection") ?? "");
      const discardable =
        chunked || closes ? await drainBody(request) : Number(length) <= DRAIN_LIMIT_BYTES;
      if (!discardable) {
        try {
          response.headers.set("Connection", "close");
        } catch {} // a response with immutable headers: the runtime decides
      }
      return response;
    });
  };
}

function listenOn(
  flag: ListenFlag,
  hostname: string,
  port: number,
  listen: () => HttpServer,
  certFile?: string,
): HttpServer {
  try {
    return listen();
  } catch (error) {
    const { code, name, message } = error as { code?: string; name?: string; message?: string };
    // Deno's failed lookup, or a name it will not look up, is a plain Error, told by its message.
    const unresolved = /^(failed to lookup address|invalid host)/.test(message ?? "")
      ? "ENOTFOUND"
      : undefined;
    const known = [code, DENO_ERROR_CODES[name ?? ""], unresolved].find(
      (c) => c && c in LISTEN_REFUSALS,
    );
    if (known) throw new CannotListen(flag, hostname, port, known);
    if (certFile && /certificate/i.test(message ?? ""))
      throw new CertificateRefused(certFile, message as string);
    throw error;
  }
}

/** How many files a warning names (there may be thousands). */
const FILES_NAMED = 10;

/**
 * One log line per registered store whose database is missing: those stores answer 503
 * (the pool refuses them whether or not this has run). On a libSQL server only when it
 * has the admin API to ask (one request per store). On files, one line naming store files
 * no store is registered for.
 */
async function reportMissingStores(
  registry: StoreRegistry,
  location: Location,
  logger: Logger,
): Promise<void> {
  const slugs = registry.all().map((store) => store.slug);
  const files = location instanceof FileLocation ? location.checkStoreFiles(slugs) : null;
  for (const slug of files?.missing ?? (await location.missingStores(slugs))) {
    const where =
      location instanceof FileLocation
        ? { path: storeDbPath(location.dataDir, slug) }
        : { namespace: storeNamespace(slug) };
    logger.error("store database file is missing; the store answers 503", {
      store: slug,
      ...where,
    });
  }
  const stray = files?.stray ?? [];
  if (stray.length > 0)
    logger.warn(
      "store files no store is registered for (a create or a delete stopped part-way): move one to keep it (a deleted store belongs in DIR/deleted/), or delete it; creating that store replaces its file",
      { count: stray.length, files: stray.slice(0, FILES_NAMED) },
    );
}

function reportOthersFiles(paths: string[], logger: Logger): void {
  if (paths.length === 0) return;
  logger.warn(
    "files in the data directory belong to another user: chown them to this server's user, or their stores may answer 503",
    { count: paths.length, files: paths.slice(0, FILES_NAMED) },
  );
}

/** Finishes, every 2 s, a load killed part-way beside this server (a failure logged once until it works). */
function settleLoadsBeside(
  location: FileLocation,
  platform: Platform,
  logger: Logger,
  reportError: ReportError,
): () => void {
  let failing = false;
  return settleCrashedLoadsEvery(location.dataDir, platform.db, 2000, (settled, error) => {
    if (error && !failing)
      reportError(
        "could not finish a load that stopped part-way (logged again only after it works)",
        error,
      );
    else if (settled) logger.warn("finished a load that stopped part-way beside this server");
    failing = error !== undefined;
  });
}

/** `--metrics-listen`: Prometheus metrics on their own address. */
function listenForMetrics(
  metrics: Metrics,
  { hostname, port }: { hostname: string; port: number },
  registry: StoreRegistry,
): HttpServer {
  return listenOn("--metrics-listen", hostname, port, () =>
    serveMetrics(metrics, (domain) => registry.resolveHost(domain) !== undefined, hostname, port),
  );
}

export async function startServer(
  config: ServeConfig,
  logger = new Logger(config.logLevel, runtime().logOutput()),
): Promise<RunningServer> {
  const location = config.location ?? new FileLocation(config.dataDir);
  await requireResolvable("--listen", config.hostname, config.port);
  if (config.metrics)
    await requireResolvable("--metrics-listen", config.metrics.hostname, config.metrics.port);
  // On a libSQL server the data directory holds only this node's name (`node-id`) and,
  // with --libsql-replicas, the open stores' replicas.
  if (location.remote) makePrivateDir(config.dataDir);
  else requireDataDir(config.dataDir);
  // One server per data directory: two would each keep their own idempotency records,
  // rate limits and mail queue state for the same stores (on a libSQL server, one name).
  const lock = DataDirLock.forServer(config.dataDir);
  try {
    if (!location.remote) reportOthersFiles(makeDataDirPrivate(config.dataDir), logger);
    return await serveFrom(config, location, logger, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function serveFrom(
  config: ServeConfig,
  location: Location,
  logger: Logger,
  lock: DataDirLock,
): Promise<RunningServer> {
  // After the lock: the directory of replicas is emptied, and must be this process's.
  if (config.libsqlReplicas && location instanceof LibsqlLocation)
    location.keepReplicasIn(join(config.dataDir, "replicas"));
  const openFiles = await runtime().raiseOpenFilesLimit();
  if (openFiles) {
    const fitting = maxOpenStoresFitting(openFiles.soft, location.descriptorsPerStore);
    const allowed = Math.max(fitting, FEWEST_OPEN_STORES);
    if (config.maxOpenStores !== null && config.maxOpenStores > allowed)
      throw new TooManyOpenStores(config.maxOpenStores, openFiles.soft, allowed);
    if (fitting < FEWEST_OPEN_STORES)
      logger.warn(
        "the open-files limit leaves little room for stores beside the 1,024 descriptors kept for connections: raise it (ulimit -n, LimitNOFILE in the unit)",
        { openFilesLimit: openFiles.soft, maxOpenStores: config.maxOpenStores ?? "default" },
      );
  }
  const platform = await Platform.open(location);
  const reportError: ReportError = (message, error) => logger.error(message, errorFields(error));
  const health = new HealthProbe(config.dataDir, reportError, platform.db);
  await health.start();
  const registry = new StoreRegistry(platform, config.platformDomain, reportError);
  const hostKeys = new HostKeyCache(platform.db);
  registry.onReload(() => hostKeys.load());
  await registry.load();
  registry.watch();
  // 1024: the usual soft limit, when it cannot be read.
  const maxOpenStores =
    config.maxOpenStores ??
    defaultMaxOpenStores(openFiles?.soft ?? 1024, location.descriptorsPerStore);
  const pool = new StorePool(location, maxOpenStores, openFiles?.soft ?? null);
  pool.startCheckpoints(1000, reportError, [platform.db]);
  const fileWatch = new StoreFileWatch(pool, (slug) =>
    logger.error(
      "store database file was removed or replaced while the server had it open: the store answers 503 until a restart; what it wrote since is lost. Stop the server, delete the file's -wal and -shm, start it again",
      { store: slug, file: location.storeName(slug) },
    ),
  );
  fileWatch.start();
  const stopSettlingLoads =
    location instanceof FileLocation
      ? settleLoadsBeside(location, platform, logger, reportError)
      : () => {};
  const mail = new MailWorker({
    pool,
    registry,
    markers: platform,
    node: location.remote ? nodeId(config.dataDir) : undefined,
    logger,
    smtp: config.smtp,
    mailDir: config.mailDir,
    mailFrom: config.mailFrom,
  });
  registry.onStoreChange((previous, next) => {
    if (!previous || previous.mailVersion !== next.mailVersion) mail.notify(next.slug);
  });

  const authFailures = new AuthFailures({
    ...DEFAULT_FAILURE_POLICY,
    limit: config.authFailureLimit,
  });
  const metrics = config.metrics
    ? new Metrics({ pool, authFailures, now: Date.now, certificateValidTo: config.tls?.validTo })
    : null;
  const deps = buildDeps({
    registry,
    pool,
    platform,
    rateLimit: config.rateLimit,
    authFailureLimit: config.authFailureLimit,
    authFailures,
    reportError,
    allowHttp: config.allowHttp,
    trustProxy: config.trustProxy,
    cursorSecret: await platform.secret(),
    openapi: openApiDocument,
    docsHtml,
    log: logger.enabled("info")
      ? (entry) => logger.write("info", entry as unknown as Record<string, unknown>)
      : undefined,
    logError: requestFailureLog(logger, Date.now, (slug) => location.storeName(slug)),
    onMailQueued: (slug) => mail.notify(slug),
    beforeMailQueued: (slug) => mail.markQueued(slug),
    now: Date.now,
    manage: {
      platform,
      hostKeys,
      rateLimiter: new RateLimiter(config.manageRateLimit),
      storeFiles: new KeyedQueue(),
    },
    healthProblem: () => health.problem,
    observe: metrics
      ? (route, status, seconds) => metrics.observe(route, status, seconds)
      : undefined,
  });
  const app = createApp(deps);
  const inFlight = new RequestsInFlight();
  const tls = config.tls ? { cert: config.tls.cert, key: config.tls.key } : undefined;
  const server = listenOn(
    "--listen",
    config.hostname,
    config.port,
    () =>
      runtime().serve({
        hostname: config.hostname,
        port: config.port,
        tls,
        // The app answers a body over its limits (1 MiB at most) with a 413 envelope in the
        // contract's order of checks; Bun's own limit answered a bare 413 ahead of all of them.
        maxRequestBodySize: Number.MAX_SAFE_INTEGER,
        fetch: inFlight.track(closingUnread(app.fetch)),
      }),
    config.tls?.certFile,
  );
  let metricsServer: HttpServer | null = null;
  if (metrics && config.metrics) {
    try {
      metricsServer = listenForMetrics(metrics, config.metrics, registry);
    } catch (error) {
      await server.stop(true);
      throw error;
    }
  }
  // Log lines only, so after listening: on a libSQL server it asks once per store.
  reportMissingStores(registry, location, logger).catch((error) =>
    reportError("could not look for missing store databases", error),
  );
  const mailScanned = mail.start();
  const housekeeper = new Housekeeper(
    { pool, registry, platform, logger, now: Date.now },
    config.housekeeping,
  );
  // After the mail scan, so start-up opens only the stores with queued mail first.
  void mailScanned.then(() => housekeeper.start());
  const stopCertificateWatch = config.tls
    ? watchCertificate(config.tls, (message, fields) => logger.warn(message, fields), Date.now)
    : () => {};
  const scheme = tls ? "https" : "http";
  let stopping: Promise<void> | undefined;
  return {
    url: `${scheme}://${hostPort(config.hostname, server.port)}`,
    metricsUrl:
      metricsServer && config.metrics
        ? `http://${hostPort(config.metrics.hostname, metricsServer.port)}/metrics`
        : null,
    port: server.port,
    logger,
    openFilesLimit: openFiles?.soft ?? null,
    maxOpenStores,
    stop: () =>
      (stopping ??= (async () => {
        const deadline = Date.now() + STOP_GRACE_MS;
        await waitAtMost(server.stop(), STOP_GRACE_MS);
        await server.stop(true);
        // Handlers of clients that hung up run on; they finish before the databases close.
        await waitAtMost(inFlight.idle(), Math.max(0, deadline - Date.now()));
        await metricsServer?.stop();
        health.stop();
        stopCertificateWatch();
        await housekeeper.stop();
        registry.stop();
        fileWatch.stop();
        stopSettlingLoads();
        await mail.stop(Math.max(0, deadline - Date.now()));
        await deps.usage.flush();
        await pool.close();
        await platform.close();
        lock.release();
        await waitAtMost(logger.settled(), LOG_SETTLE_MS);
      })()),
  };
}
