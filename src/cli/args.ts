import { parseArgs } from "node:util";
import * as v from "valibot";
import { requireOwnDataDir, requireRegistry } from "../db/data-dir";
import { FileLocation, LibsqlLocation, type Location } from "../db/location";
import { envVariable } from "../env";
import { echo } from "../errors";
import { platformDomainSchema } from "../stores/rules";
import { UsageError } from "./errors";

/**
 * A command's flags, as one table: the parser, the usage line and `--help` are all read
 * from it, so what a command accepts and what its help says cannot drift apart.
 */
export interface FlagSpec {
  type: "string" | "boolean";
  /** The value's placeholder in help, e.g. `D` in `--domain D`. */
  value?: string;
  required?: boolean;
  help: string;
}
export type FlagTable = Record<string, FlagSpec>;

export interface CommandSpec<F extends FlagTable = FlagTable> {
  /** The words that run it: `serve`, `stores add`. */
  name: string;
  /** Positional arguments, in order. */
  args?: readonly string[];
  summary: string;
  flags: F;
}

export const COMMON_FLAGS = {
  data: {
    type: "string",
    value: "DIR",
    help: "the data directory (default ./data, env STOREAPI_DATA)",
  },
  "libsql-url": {
    type: "string",
    value: "URL",
    help: "keep every database on this libSQL server (sqld --enable-namespaces) instead of --data (env STOREAPI_LIBSQL_URL)",
  },
  "libsql-admin-url": {
    type: "string",
    value: "URL",
    help: "the libSQL server's admin API, to create and delete namespaces (env STOREAPI_LIBSQL_ADMIN_URL)",
  },
  "libsql-auth-token": {
    type: "string",
    value: "T",
    help: "token sent to the libSQL server (env STOREAPI_LIBSQL_AUTH_TOKEN)",
  },
  "libsql-admin-auth-key": {
    type: "string",
    value: "K",
    help: "the key of the libSQL server's admin API, sqld's --admin-auth-key (env STOREAPI_LIBSQL_ADMIN_AUTH_KEY)",
  },
  json: { type: "boolean", help: "print machine-readable JSON on stdout" },
  help: { type: "boolean", help: "show this help" },
} satisfies FlagTable;

/**
 * The common flags given before the command (`storeapi --data DIR stores list`), and what
 * follows them. `--help` is not one of them: before a command it asks for the overview.
 */
export function leadingCommonFlags(argv: string[]): [flags: string[], rest: string[]] {
  let i = 0;
  while (i < argv.length) {
    const [name, inlineValue] = argv[i].replace(/^--/, "").split("=", 2);
    const common = argv[i].startsWith("--") && name !== "help" && Object.hasOwn(COMMON_FLAGS, name);
    const flag = common ? COMMON_FLAGS[name as keyof typeof COMMON_FLAGS] : undefined;
    if (!flag) break;
    const width = flag.type === "string" && inlineValue === undefined ? 2 : 1;
    if (i + width > argv.length) break;
    i += width;
  }
  return [argv.slice(0, i), argv.slice(i)];
}

/** `--platform-domain`, for the commands that check a store's own domain against it. */
export const PLATFORM_DOMAIN_FLAG = {
  type: "string",
  value: "D",
  help: "stores' alternative addresses are {slug}.D; own domains may not lie under it (default localhost, env STOREAPI_PLATFORM_DOMAIN)",
} satisfies FlagSpec;

type Values<F extends FlagTable> = {
  [K in keyof F]?: F[K]["type"] extends "boolean" ? boolean : string;
};

export interface Parsed<F extends FlagTable> {
  values: Values<F & typeof COMMON_FLAGS>;
  args: string[];
}

export interface Command {
  spec: CommandSpec;
  run(argv: string[]): Promise<void>;
}

/** `--help` was asked for: main prints the text on stdout and exits 0. */
export class HelpRequested extends Error {}

/** A command: its flag table, and what it does with the parsed command line. */
export function command<F extends FlagTable>(
  spec: CommandSpec<F>,
  run: (parsed: Parsed<F>) => Promise<void>,
): Command {
  return { spec, run: (argv) => run(parseCommand(argv, spec)) };
}

const flagText = (name: string, flag: FlagSpec) => `--${name}${flag.value ? ` ${flag.value}` : ""}`;

/** `storeapi stores add SLUG --domain D … [--name N]`. */
export function usageLine(spec: CommandSpec): string {
  const flags = Object.entries(spec.flags).map(([name, flag]) =>
    flag.required ? flagText(name, flag) : `[${flagText(name, flag)}]`,
  );
  return ["storeapi", spec.name, ...(spec.args ?? []), ...flags].join(" ");
}

export function commandHelp(spec: CommandSpec): string {
  // A command may give a common flag its own help (demo's --data).
  const common = Object.entries(COMMON_FLAGS).filter(([name]) => !Object.hasOwn(spec.flags, name));
  const rows = [...Object.entries(spec.flags), ...common].map(
    ([name, flag]) => `  ${flagText(name, flag).padEnd(28)} ${flag.help}`,
  );
  return `Usage: ${usageLine(spec)}\n\n${spec.summary}\n\nFlags:\n${rows.join("\n")}\n`;
}

/** Parses a command's argv strictly: unknown flags, missing values and missing arguments are usage errors. */
export function parseCommand<F extends FlagTable>(argv: string[], spec: CommandSpec<F>): Parsed<F> {
  const flags: FlagTable = { ...COMMON_FLAGS, ...spec.flags };
  const options = Object.fromEntries(
    Object.entries(flags).map(([name, flag]) => [name, { type: flag.type }]),
  );
  // Not strict: parseArgs' own messages are written for programmers; these are for operators.
  const { values, positionals, tokens } = parseArgs({
    args: argv,
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  // Asked for as a flag of its own: `--name -h` is a name, and `-- --help` an argument.
  const asksForHelp = tokens.some(
    (t) => t.kind === "option" && (t.name === "help" || t.name === "h") && !t.inlineValue,
  );
  if (asksForHelp) throw new HelpRequested(commandHelp(spec));
  const given = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const flag = Object.hasOwn(flags, token.name) ? flags[token.name] : undefined;
    if (!flag)
      throw new UsageError(
        `unknown option ${token.rawName} for "storeapi ${spec.name}"; see storeapi ${spec.name} --help`,
      );
    if (flag.type === "boolean" && token.inlineValue)
      throw new UsageError(`${token.rawName} takes no value`);
    // `--domain --json` would take "--json" as the domain: a value starting with "-" must be given as --domain=-x.
    // An empty value (`--mail-dir ""`, an unset shell variable) would mean the current directory, or nothing.
    if (flag.type === "string" && !token.value)
      throw new UsageError(`${token.rawName} needs a value`);
    // What the runtime makes of bytes that are not UTF-8: stored, it would show in emails and pages.
    if (token.value?.includes("\uFFFD")) throw notUtf8(token.rawName);
    if (flag.type === "string" && !token.inlineValue && token.value?.startsWith("-")) {
      // `--rate-limit -1` is a value the operator meant; `--domain --json` is a forgotten one.
      const hint = token.value.startsWith("--")
        ? ""
        : ` (a value that starts with "-" is written ${token.rawName}=${echo(token.value)})`;
      throw new UsageError(`${token.rawName} needs a value${hint}`);
    }
    // The last would win: `--orders write --orders none` made a key that cannot write orders.
    if (flag.type === "string" && given.has(token.name))
      throw new UsageError(`${token.rawName} is given more than once; give it once`);
    given.add(token.name);
  }
  const args = checkPositionals(positionals, spec);
  for (const [name, flag] of Object.entries(spec.flags)) {
    if (flag.required && values[name] === undefined)
      throw new UsageError(`missing --${name}; usage: ${usageLine(spec)}`);
  }
  return { values: values as Parsed<F>["values"], args };
}

const notUtf8 = (what: string) =>
  new UsageError(
    `${what} is not UTF-8 text (it holds bytes that are not, or U+FFFD); give it in UTF-8`,
  );

/** Exactly the spec's positional arguments, or a usage error naming the first missing or extra one. */
function checkPositionals(given: string[], spec: CommandSpec): string[] {
  const names = spec.args ?? [];
  if (given.length < names.length)
    throw new UsageError(`missing ${names[given.length]}; usage: ${usageLine(spec)}`);
  if (given.length > names.length)
    throw new UsageError(`unexpected argument "${given[names.length]}"; usage: ${usageLine(spec)}`);
  const empty = given.indexOf("");
  if (empty >= 0) throw new UsageError(`${names[empty]} is empty; usage: ${usageLine(spec)}`);
  // A path that is not UTF-8 reaches us with U+FFFD in it: used, it names another file.
  const garbled = given.findIndex((arg) => arg.includes("\uFFFD"));
  if (garbled >= 0) throw notUtf8(names[garbled] as string);
  return given;
}

/**
 * The data directory: `--data`, else `STOREAPI_DATA`, else ./data. An empty one is a
 * mistake (an unset variable in a script, say), never the current directory.
 */
export function dataDirOf(values: { data?: string }): string {
  // (An empty --data is refused with every flag's empty value, by `parseCommand`.)
  const dataDir = values.data ?? envVariable("STOREAPI_DATA") ?? "./data";
  if (dataDir === "")
    throw new UsageError("STOREAPI_DATA is empty; give the data directory (default ./data)");
  if (dataDir.includes("\uFFFD")) throw notUtf8("STOREAPI_DATA"); // --data was checked as a flag
  return dataDir;
}

type LocationFlags = {
  data?: string;
  "libsql-url"?: string;
  "libsql-admin-url"?: string;
  "libsql-auth-token"?: string;
  "libsql-admin-auth-key"?: string;
};

/** An http(s):// or libsql:// URL given as `label`, or a usage error saying so. */
function serverUrl(value: string, label: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `${label} must be an http://, https:// or libsql:// URL, not ${JSON.stringify(echo(value))}`,
    );
  }
  // Error lines and logs name the server by its URL, and `ps` shows flags. Checked first:
  // no refusal below repeats more of the URL than its scheme and host.
  const carried = [...url.searchParams.keys()].some((key) => key.toLowerCase() === "authtoken");
  if (url.username || url.password || carried) {
    const flag = /admin/i.test(label) ? "--libsql-admin-auth-key" : "--libsql-auth-token";
    throw new UsageError(
      `${label} must not carry a user, password or token (messages would show it); give the secret with ${flag} or its environment variable`,
    );
  }
  if (!["http:", "https:", "libsql:"].includes(url.protocol) || !url.host)
    throw new UsageError(
      `${label} must be an http://, https:// or libsql:// URL, not ${JSON.stringify(echo(`${url.protocol}//${url.host}`))}`,
    );
  refuseClientOptions(url, value, label);
  return value;
}

/** What the libSQL client would refuse later, as an "unexpected failure": bad usage now. */
function refuseClientOptions(url: URL, value: string, label: string): void {
  if (value.includes("#")) throw new UsageError(`${label} must not end in a #fragment`);
  for (const [name, setting] of url.searchParams) {
    if (name === "tls" && ["0", "1"].includes(setting)) continue;
    // Only a short tls value is shown: anything else may be a secret.
    const shown = name === "tls" && /^\w{1,8}$/.test(setting) ? `tls=${setting}` : name;
    throw new UsageError(
      `${label} takes no query parameter but tls=0 or tls=1, not ${JSON.stringify(echo(shown))}`,
    );
  }
  const tls = url.searchParams.get("tls");
  if (tls === "1" && url.protocol === "http:")
    throw new UsageError(`${label} is http://, which tls=1 cannot make secure: use https://`);
  if (tls === "0" && url.protocol === "https:")
    throw new UsageError(`${label} is https://, which tls=0 cannot make plain: use http://`);
}

/** Where the command's databases live: `--libsql-url` (or its variable) if given, else the data directory. */
export function locationOf(values: LocationFlags, env = process.env): Location {
  const from = (flag: keyof LocationFlags, variable: string) => {
    if (values[flag] !== undefined) return { value: values[flag], label: `--${flag}` };
    const value = envVariable(variable, env);
    if (value === undefined) return undefined;
    // `STOREAPI_LIBSQL_URL=$UNSET` would otherwise quietly mean the data directory.
    if (value === "") throw new UsageError(`${variable} is empty; give a value or leave it unset`);
    if (value.includes("\uFFFD")) throw notUtf8(variable);
    return { value, label: variable };
  };
  const url = from("libsql-url", "STOREAPI_LIBSQL_URL");
  const admin = from("libsql-admin-url", "STOREAPI_LIBSQL_ADMIN_URL");
  const token = from("libsql-auth-token", "STOREAPI_LIBSQL_AUTH_TOKEN");
  const adminKey = from("libsql-admin-auth-key", "STOREAPI_LIBSQL_ADMIN_AUTH_KEY");
  if (!url) {
    const given = admin ?? token ?? adminKey;
    if (given) throw new UsageError(`${given.label} needs --libsql-url`);
    const dataDir = dataDirOf(values);
    requireOwnDataDir(dataDir);
    return new FileLocation(dataDir);
  }
  return new LibsqlLocation({
    url: serverUrl(url.value, url.label),
    adminUrl: admin ? serverUrl(admin.value, admin.label) : null,
    authToken: token?.value ?? null,
    adminAuthKey: adminKey?.value ?? null,
  });
}

export function platformDomainOf(values: { "platform-domain"?: string }): string {
  const flag = values["platform-domain"];
  const env = envVariable("STOREAPI_PLATFORM_DOMAIN");
  if (flag !== undefined) return checkValue(platformDomainSchema, flag, "--platform-domain");
  if (env !== undefined) return checkValue(platformDomainSchema, env, "STOREAPI_PLATFORM_DOMAIN");
  return "localhost";
}

/**
 * `locationOf` for a command that only works on existing data: on files, the directory
 * must hold a registry (a look into an empty directory makes none there).
 */
export function existingLocationOf(values: LocationFlags): Location {
  const location = locationOf(values);
  if (!location.remote) requireRegistry(dataDirOf(values));
  return location;
}

/**
 * A value checked by a schema, or a usage error naming it (`--owner-email`, `SLUG`):
 * `--owner-email "a@x, b@y" must be a valid email address.`
 */
export function checkValue<S extends v.GenericSchema<string, unknown>>(
  schema: S,
  value: string,
  label: string,
): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  // JSON quoting keeps the line one line whatever the value holds (CR/LF).
  if (!result.success)
    throw new UsageError(`${label} ${JSON.stringify(echo(value))} ${result.issues[0].message}`);
  return result.output;
}

/** `a`, `a or b`, `a, b or c`. */
export const orList = (names: string[]) =>
  names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : names.join("");

/** `on`/`off` flags. */
export function onOff(value: string | undefined, flag: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === "on") return true;
  if (value === "off") return false;
  throw new UsageError(`--${flag} takes on or off, not "${echo(value)}"`);
}
