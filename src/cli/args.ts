import { parseArgs, type ParseArgsConfig } from "node:util";
import { requireDataDir } from "../db/data-dir";
import { UsageError } from "./errors";

type Options = NonNullable<ParseArgsConfig["options"]>;

const COMMON_OPTIONS = {
  data: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean" },
} satisfies Options;

/** Parses a command's argv strictly: unknown flags and missing values are usage errors. */
export function parseCommand<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message.split("\n")[0]);
  }
}

export function dataDirOf(values: { data?: string }): string {
  return values.data ?? process.env.STOREAPI_DATA ?? "./data";
}

/** The data directory of a command that only works on existing data: never creates one. */
export function existingDataDirOf(values: { data?: string }): string {
  const dataDir = dataDirOf(values);
  requireDataDir(dataDir);
  return dataDir;
}

/** Exactly `names.length` positional arguments, or a usage error naming the first missing one. */
export function positionals(given: string[], names: string[], usage: string): string[] {
  if (given.length < names.length) throw new UsageError(`missing ${names[given.length]}; usage: ${usage}`);
  if (given.length > names.length) throw new UsageError(`unexpected argument "${given[names.length]}"; usage: ${usage}`);
  return given;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `a`, `a or b`, `a, b or c`. */
const orList = (names: string[]) => (names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : names.join(""));

/** Runs `storeapi GROUP SUB …`: the named subcommand, or a usage error listing them. */
export function runSubcommand(
  group: string,
  argv: string[],
  commands: Record<string, (argv: string[]) => Promise<void>>,
): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub !== undefined && Object.hasOwn(commands, sub)) return commands[sub](rest);
  throw new UsageError(`unknown ${group} command "${sub ?? ""}"; use ${orList(Object.keys(commands))}`);
}

/** `on`/`off` flags. */
export function onOff(value: string | undefined, flag: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === "on") return true;
  if (value === "off") return false;
  throw new UsageError(`--${flag} takes on or off, not "${value}"`);
}
