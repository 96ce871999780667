import { existsSync } from "node:fs";
import { CidrList } from "./http/cidr";
import { LOG_LEVELS, type LogLevel } from "./log";
import { parseSmtpUrl } from "./mail/transports/smtp";

export interface ServeConfig {
  dataDir: string;
  hostname: string;
  port: number;
  tls: { cert: string; key: string } | null;
  trustProxy: CidrList | null;
  allowHttp: boolean;
  platformDomain: string;
  rateLimit: number;
  authFailureLimit: number;
  smtp: string | null;
  mailDir: string | null;
  mailFrom: string;
  logLevel: LogLevel;
  /** null: sized from the open-files limit at start. */
  maxOpenStores: number | null;
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
  "auth-failure-limit",
  "smtp",
  "mail-dir",
  "mail-from",
  "log-level",
  "max-open-stores",
] as const;

const envName = (flag: string) => `STOREAPI_${flag.toUpperCase().replace(/-/g, "_")}`;

/** A flag's value, else its `STOREAPI_<NAME>` environment variable. */
function pick(flags: ServeFlags, flag: string, env: NodeJS.ProcessEnv): string | boolean | undefined {
  return flags[flag] ?? env[envName(flag)];
}

const asBool = (value: string | boolean | undefined) =>
  value === true || (typeof value === "string" && /^(1|true|on|yes)$/i.test(value));

/** Validates every serve setting at once; throws listing every mistake. */
export function parseServeConfig(flags: ServeFlags, dataDir: string, env = process.env): ServeConfig {
  const problems: string[] = [];
  const str = (flag: string) => {
    const value = pick(flags, flag, env);
    return typeof value === "string" ? value : undefined;
  };
  const positiveInt = (flag: string, fallback: number) => {
    const value = str(flag);
    if (value === undefined) return fallback;
    if (!/^[1-9]\d{0,8}$/.test(value)) problems.push(`--${flag} must be a positive whole number, not "${value}"`);
    return Number(value);
  };

  const listen = str("listen") ?? "127.0.0.1:8080";
  const listenMatch = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(listen);
  if (!listenMatch || Number(listenMatch[2]) > 65535) problems.push(`--listen must be HOST:PORT, not "${listen}"`);

  const cert = str("tls-cert");
  const key = str("tls-key");
  if ((cert === undefined) !== (key === undefined)) problems.push("--tls-cert and --tls-key go together");
  for (const [flag, file] of [["tls-cert", cert], ["tls-key", key]] as const) {
    if (file !== undefined && !existsSync(file)) problems.push(`--${flag}: no file at ${file}`);
  }

  let trustProxy: CidrList | null = null;
  const trust = str("trust-proxy");
  if (trust !== undefined) {
    try {
      trustProxy = CidrList.parse(trust);
    } catch (error) {
      problems.push(`--trust-proxy: ${(error as Error).message}`);
    }
  }

  const smtp = str("smtp") ?? null;
  if (smtp !== null) {
    try {
      parseSmtpUrl(smtp);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }

  const logLevel = (str("log-level") ?? "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);

  const platformDomain = (str("platform-domain") ?? "localhost").toLowerCase();
  const config: ServeConfig = {
    dataDir,
    hostname: listenMatch ? listenMatch[1].replace(/^\[|\]$/g, "") : "127.0.0.1",
    port: listenMatch ? Number(listenMatch[2]) : 8080,
    tls: cert && key ? { cert, key } : null,
    trustProxy,
    allowHttp: asBool(pick(flags, "allow-http", env)),
    platformDomain,
    rateLimit: positiveInt("rate-limit", 120),
    authFailureLimit: positiveInt("auth-failure-limit", 20),
    smtp,
    mailDir: str("mail-dir") ?? null,
    mailFrom: str("mail-from") ?? `no-reply@${platformDomain}`,
    logLevel,
    maxOpenStores: str("max-open-stores") === undefined ? null : positiveInt("max-open-stores", 0),
  };
  if (problems.length) throw new Error(problems.join("; "));
  return config;
}
