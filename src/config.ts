import { existsSync } from "node:fs";
import * as v from "valibot";
import type { Location } from "./db/location";
import { envVariable } from "./env";
import { echo } from "./errors";
import { DEFAULT_HOUSEKEEPING, type HousekeepingPolicy } from "./housekeeping";
import { CidrList } from "./http/cidr";
import { LOG_LEVELS, type LogLevel } from "./log";
import { parseSmtpUrl } from "./mail/transports/smtp";
import { platformDomainSchema } from "./stores/rules";
import { readTlsPair, type TlsPair } from "./tls";

export interface ServeConfig {
  dataDir: string;
  /** Where the databases live when not in files under `dataDir` (a libSQL server). */
  location?: Location;
  hostname: string;
  port: number;
  tls: TlsPair | null;
  trustProxy: CidrList | null;
  allowHttp: boolean;
  platformDomain: string;
  rateLimit: number;
  /** Requests per minute per host key on the management API. */
  manageRateLimit: number;
  authFailureLimit: number;
  smtp: string | null;
  mailDir: string | null;
  mailFrom: string;
  logLevel: LogLevel;
  housekeeping: HousekeepingPolicy;
  /** `--metrics-listen`: where Prometheus scrapes `/metrics`, apart from the API. */
  metrics: { hostname: string; port: number } | null;
  /** null: sized from the open-files limit at start. */
  maxOpenStores: number | null;
  /** `--libsql-replicas`: store API reads from a local embedded replica of each open store. */
  libsqlReplicas: boolean;
}

/** Flag values as given on the command line (strings/booleans), before validation. */
export type ServeFlags = Partial<Record<string, string | boolean>>;

export const SERVE_FLAGS = [
  "listen",
  "tls-cert",
  "tls-key",
  "trust-proxy",
  "allow-http",
  "platform-domain",
  "rate-limit",
  "manage-rate-limit",
  "auth-failure-limit",
  "smtp",
  "mail-dir",
  "mail-from",
  "log-level",
  "keep-sent-mail-days",
  "purge-batch",
  "purge-every-minutes",
  "metrics-listen",
  "max-open-stores",
  "libsql-replicas",
] as const;

/** The serve flags that take no value. */
export const SERVE_SWITCHES: ReadonlySet<string> = new Set(["allow-http", "libsql-replicas"]);

/** Each serve flag's placeholder and help line (operations.md), for `storeapi serve --help`. */
export const SERVE_FLAG_HELP: Record<
  (typeof SERVE_FLAGS)[number],
  { value?: string; help: string }
> = {
  listen: { value: "HOST:PORT", help: "address to bind (default 127.0.0.1:8080)" },
  "tls-cert": {
    value: "FILE",
    help: "serve HTTPS directly with this certificate (with --tls-key)",
  },
  "tls-key": { value: "FILE", help: "the certificate's private key" },
  "trust-proxy": {
    value: "CIDRS",
    help: "honour X-Forwarded-Proto and X-Forwarded-For from these peers",
  },
  "allow-http": { help: "accept plain HTTP (development only)" },
  "platform-domain": {
    value: "D",
    help: "alternative store addresses are {slug}.D (default localhost)",
  },
  "rate-limit": { value: "N", help: "requests per minute per key (default 120)" },
  "manage-rate-limit": {
    value: "N",
    help: "management API requests per minute per host key (default 600)",
  },
  "auth-failure-limit": {
    value: "N",
    help: "failed keys per IP per 10 minutes before a block (default 20)",
  },
  smtp: { value: "URL", help: "deliver mail through smtp://user:pass@host:port or smtps://…" },
  "mail-dir": { value: "DIR", help: "write each delivered email as an .eml file in DIR" },
  "mail-from": { value: "ADDR", help: "sender address (default no-reply@{platform-domain})" },
  "log-level": { value: "L", help: `${LOG_LEVELS.join(", ")} (default info)` },
  "keep-sent-mail-days": {
    value: "N",
    help: "purge sent mail older than N days (default 30, at most 36500)",
  },
  "purge-batch": {
    value: "N",
    help: "rows deleted per statement by the housekeeping sweep (default 500)",
  },
  "purge-every-minutes": {
    value: "N",
    help: "minutes between housekeeping sweeps (default 60, at most 10080: a week)",
  },
  "metrics-listen": {
    value: "HOST:PORT",
    help: "serve Prometheus metrics at /metrics on this separate address",
  },
  "max-open-stores": {
    value: "N",
    help: "store databases kept open at once (default sized from the open-files limit)",
  },
  "libsql-replicas": {
    help: "with --libsql-url: read the store API from a local replica of each open store, kept under --data (store-{slug}.{host} must resolve to the server)",
  },
};

/** `--mail-from`: an address, or a name and an address (`Shop <no-reply@example.com>`). */
const mailFromSchema = v.pipe(
  v.string(),
  v.check((value) => {
    const parts = /^(?:[^<>\r\n]*<([^<>]*)>|([^<>]*))$/.exec(value.trim());
    // Any host name after the @, like the default's (`no-reply@localhost`).
    const address = /^[^\s@<>,;:"]+@([^\s@<>]+)$/.exec((parts?.[1] ?? parts?.[2] ?? "").trim());
    return address !== null && v.is(platformDomainSchema, address[1]);
  }, 'must be an address like no-reply@example.com, or "Shop <no-reply@example.com>".'),
);

/**
 * A week: the longest wait between sweeps. A timer's delay must fit 2^31 - 1 ms (24.8
 * days); past it Bun and Node fire it after 1 ms, every millisecond.
 */
const MAX_PURGE_EVERY_MINUTES = 7 * 24 * 60;
/** A century: cutoffs stay within exact integers of milliseconds. */
const MAX_KEEP_SENT_MAIL_DAYS = 36_500;

export const envName = (flag: string) => `STOREAPI_${flag.toUpperCase().replace(/-/g, "_")}`;

/** A flag's value, else its `STOREAPI_<NAME>` environment variable. */
function pick(
  flags: ServeFlags,
  flag: string,
  env: NodeJS.ProcessEnv,
): string | boolean | undefined {
  return flags[flag] ?? envVariable(envName(flag), env);
}

/** The largest number a setting takes unless it says otherwise. */
const LARGEST_SETTING = 999_999_999;

/** Validates every serve setting at once; throws listing every mistake. */
export function parseServeConfig(
  flags: ServeFlags,
  dataDir: string,
  env = process.env,
): ServeConfig {
  const problems: string[] = [];
  // A mistake is named as the operator wrote it: the flag, or the variable it came from.
  const source = (flag: string) => (flags[flag] !== undefined ? `--${flag}` : envName(flag));
  const str = (flag: string) => {
    const value = pick(flags, flag, env);
    if (value === "") problems.push(`${source(flag)} is empty; give a value or leave it unset`);
    // As for a flag (src/cli/args.ts): bytes that are not UTF-8 would reach emails as U+FFFD.
    if (typeof value === "string" && value.includes("\uFFFD"))
      problems.push(`${source(flag)} is not UTF-8 text (it holds bytes that are not, or U+FFFD)`);
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  // A switch from the environment: a value that is neither on nor off is a mistake, not off.
  const onOff = (flag: string) => {
    const value = pick(flags, flag, env);
    if (typeof value !== "string") return value === true;
    if (/^(1|true|on|yes)$/i.test(value)) return true;
    if (!/^(0|false|off|no|)$/i.test(value))
      problems.push(
        `${source(flag)} must be 1, true, on or yes (or 0, false, off, no), not "${echo(value)}"`,
      );
    return false;
  };
  const positiveInt = <F extends number | null>(
    flag: string,
    fallback: F,
    max = LARGEST_SETTING,
  ) => {
    const value = str(flag);
    if (value === undefined) return fallback;
    if (!/^[1-9]\d*$/.test(value))
      problems.push(`${source(flag)} must be a positive whole number, not "${echo(value)}"`);
    else if (value.length > String(max).length || Number(value) > max)
      problems.push(`${source(flag)} must be at most ${max}, not ${echo(value)}`);
    return Number(value);
  };

  const address = (flag: string, value: string) => {
    const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
    if (!match || Number(match[2]) > 65535) {
      problems.push(`${source(flag)} must be HOST:PORT, not "${echo(value)}"`);
      return null;
    }
    return { hostname: match[1].replace(/^\[|\]$/g, ""), port: Number(match[2]) };
  };
  const listen = address("listen", str("listen") ?? "127.0.0.1:8080");
  const metricsListen = str("metrics-listen");

  const cert = str("tls-cert");
  const key = str("tls-key");
  if ((cert === undefined) !== (key === undefined))
    problems.push("--tls-cert and --tls-key go together");
  for (const [flag, file] of [
    ["tls-cert", cert],
    ["tls-key", key],
  ] as const) {
    if (file !== undefined && !existsSync(file))
      problems.push(`${source(flag)}: no file at ${file}`);
  }
  let tls: TlsPair | null = null;
  if (cert && key && existsSync(cert) && existsSync(key)) {
    const pair = readTlsPair(
      { label: source("tls-cert"), file: cert },
      { label: source("tls-key"), file: key },
    );
    if (typeof pair === "string") problems.push(pair);
    else tls = pair;
  }

  let trustProxy: CidrList | null = null;
  const trust = str("trust-proxy");
  if (trust !== undefined) {
    try {
      trustProxy = CidrList.parse(trust);
    } catch (error) {
      problems.push(`${source("trust-proxy")}: ${(error as Error).message}`);
    }
  }

  const smtp = str("smtp") ?? null;
  if (smtp !== null) {
    try {
      parseSmtpUrl(smtp);
    } catch (error) {
      problems.push((error as Error).message.replace(/^--smtp/, source("smtp")));
    }
  }

  const logLevel = (str("log-level") ?? "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`${source("log-level")} must be one of ${LOG_LEVELS.join(", ")}`);

  const checked = <T>(flag: string, schema: v.GenericSchema<string, T>, fallback: T): T => {
    const value = str(flag);
    if (value === undefined) return fallback;
    const result = v.safeParse(schema, value);
    if (result.success) return result.output;
    problems.push(`${source(flag)} ${JSON.stringify(echo(value))} ${result.issues[0].message}`);
    return fallback;
  };
  const platformDomain = checked("platform-domain", platformDomainSchema, "localhost");
  const mailFrom = checked("mail-from", mailFromSchema, `no-reply@${platformDomain}`);
  const config: ServeConfig = {
    dataDir,
    hostname: listen?.hostname ?? "127.0.0.1",
    port: listen?.port ?? 8080,
    tls,
    trustProxy,
    allowHttp: onOff("allow-http"),
    platformDomain,
    rateLimit: positiveInt("rate-limit", 120),
    manageRateLimit: positiveInt("manage-rate-limit", 600),
    authFailureLimit: positiveInt("auth-failure-limit", 20),
    smtp,
    mailDir: str("mail-dir") ?? null,
    mailFrom,
    logLevel,
    housekeeping: {
      keepSentMailDays: positiveInt(
        "keep-sent-mail-days",
        DEFAULT_HOUSEKEEPING.keepSentMailDays,
        MAX_KEEP_SENT_MAIL_DAYS,
      ),
      batch: positiveInt("purge-batch", DEFAULT_HOUSEKEEPING.batch),
      everyMinutes: positiveInt(
        "purge-every-minutes",
        DEFAULT_HOUSEKEEPING.everyMinutes,
        MAX_PURGE_EVERY_MINUTES,
      ),
    },
    metrics: metricsListen === undefined ? null : address("metrics-listen", metricsListen),
    maxOpenStores: positiveInt("max-open-stores", null),
    libsqlReplicas: onOff("libsql-replicas"),
  };
  if (problems.length) throw new Error(problems.join("; "));
  return config;
}
