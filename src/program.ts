import { adminLinkCommand } from "./cli/admin-link";
import { type Command, HelpRequested, leadingCommonFlags, orList, usageLine } from "./cli/args";
import { backupCommand } from "./cli/backup";
import { demoCommand } from "./cli/demo";
import { CliError, fileSystemErrorLine, UsageError } from "./cli/errors";
import { hostKeysCommands } from "./cli/host-keys";
import { keysCommands } from "./cli/keys";
import { loadCommand } from "./cli/load";
import { mailCommands } from "./cli/mail";
import { migrateCommand } from "./cli/migrate";
import { openapiCommand } from "./cli/openapi";
import { oneSafeLine, outputFailure, printJson, printText, watchOutput } from "./cli/output";
import { serveCommand } from "./cli/serve";
import { storesCommands } from "./cli/stores";
import { versions, versionText } from "./cli/version";
import { DataDirError } from "./db/data-dir";
import {
  DamagedDatabase,
  DatabaseUnavailable,
  InaccessibleDatabase,
  isDamaged,
  isDiskFull,
  isInaccessible,
  isLocked,
  SchemaTooNewError,
  sqliteWords,
} from "./db/driver";
import { LibsqlAdminError } from "./db/location";

import { echo } from "./errors";
import { type Runtime, useRuntime } from "./runtime/runtime";
import { CannotListen, CertificateRefused, TooManyOpenStores } from "./server";

const COMMANDS: Command[] = [
  serveCommand,
  demoCommand,
  loadCommand,
  ...storesCommands,
  ...keysCommands,
  ...hostKeysCommands,
  adminLinkCommand,
  ...mailCommands,
  openapiCommand,
  backupCommand,
  migrateCommand,
];

/** A command's line in the overview: its full usage, or `[flags]` when it has too many to list there. */
function overviewLine({ spec }: Command): string {
  const full = usageLine(spec).slice("storeapi ".length);
  const short = [spec.name, ...(spec.args ?? []), "[flags]"].join(" ");
  return `  ${full.length <= 120 ? full : short}\n      ${spec.summary}`;
}

const overview = (commands: Command[]) =>
  `storeapi: a multi-tenant Store Management API server

Usage: storeapi COMMAND [flags]     (every command takes --data DIR, --json and --help)

${commands.map(overviewLine).join("\n")}

storeapi COMMAND --help lists a command's flags; storeapi --version prints the version.
`;

/** The command argv names, and the arguments after its words; a usage error for an unknown one. */
function findCommand(argv: string[]): [Command, string[]] {
  const [first, second] = argv;
  const single = COMMANDS.find((c) => c.spec.name === first);
  if (single) return [single, argv.slice(1)];
  const group = COMMANDS.filter((c) => c.spec.name.startsWith(`${first} `));
  if (group.length === 0) throw new UsageError(`unknown command "${first}"; run storeapi --help`);
  const sub = group.find((c) => c.spec.name === `${first} ${second}`);
  if (sub) return [sub, argv.slice(2)];
  if (second === "--help" || second === "-h") throw new HelpRequested(overview(group));
  const names = group.map((c) => c.spec.name.slice(first.length + 1));
  if (second === undefined || second.startsWith("-"))
    throw new UsageError(`missing the ${first} command; use ${orList(names)}`);
  throw new UsageError(`unknown ${first} command "${second}"; use ${orList(names)}`);
}

/**
 * The command line with any common flags given before the command, or between a group's
 * two words, moved after its words, where each command's parser reads them:
 * `--data DIR stores list` and `stores --data DIR list` → `stores list --data DIR`.
 */
function commandFirst(argv: string[]): string[] {
  const [flags, rest] = leadingCommonFlags(argv);
  const [first, ...afterFirst] = rest;
  // No command: usage or help, which read no flags.
  if (first === undefined) return rest;
  if (!COMMANDS.some((c) => c.spec.name.startsWith(`${first} `)))
    return [first, ...flags, ...afterFirst];
  const [between, tail] = leadingCommonFlags(afterFirst);
  // A group without its second word: usage or help (which reads only --json).
  if (tail.length === 0 || tail[0].startsWith("-")) return [first, ...tail, ...flags, ...between];
  return [first, tail[0], ...flags, ...between, ...tail.slice(1)];
}

export const main = (commandLine: string[]): Promise<number> => run(commandFirst(commandLine));

/** Runs a command line already in command-first order. */
async function run(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "--help" || first === "-h" || first === "help") {
    // `storeapi help keys create` is `storeapi keys create --help`.
    const [flags, words] = leadingCommonFlags(rest);
    if (words.length > 0 && !words[0].startsWith("-"))
      return run(commandFirst([...words, ...flags, "--help"]));
    printHelp(overview(COMMANDS), argv);
    return 0;
  }
  try {
    if (first === undefined || first === "--json")
      throw new UsageError("no command given; run storeapi --help for the commands");
    if (first === "--version" || first === "-V") {
      printVersion(argv.slice(1));
      return 0;
    }
    const [command, rest] = findCommand(argv);
    await command.run(rest);
    return 0;
  } catch (error) {
    if (error instanceof HelpRequested) {
      printHelp(error.message, argv);
      return 0;
    }
    const [status, line] = failure(error);
    // The line may quote what the operator typed: an escape sequence in it stays text.
    process.stderr.write(`storeapi: ${oneSafeLine(line)}\n`);
    return status;
  }
}

/** Help text; with `--json`, which promises JSON on stdout and nothing else, as `{"help": …}`. */
function printHelp(text: string, argv: string[]): void {
  if (argv.includes("--json")) printJson({ help: text });
  else printText(text);
}

/** `--version`, or with `--json` the same as an object. */
function printVersion(flags: string[]): void {
  const unknown = flags.find((flag) => flag !== "--json");
  if (unknown !== undefined)
    throw new UsageError(`--version takes only --json, not "${echo(unknown)}"`);
  if (flags.length > 0) printJson(versions());
  else printText(versionText());
}

/** Failures whose message is the whole line to print (they name what to do). */
const SELF_EXPLAINED = [
  CliError,
  SchemaTooNewError,
  DataDirError,
  LibsqlAdminError,
  DatabaseUnavailable,
  DamagedDatabase,
  InaccessibleDatabase,
  CannotListen,
  CertificateRefused,
  TooManyOpenStores,
];

/** What a failed command says, in one line, and its exit status: 2 for bad usage, else 1. */
function failure(error: unknown): [status: number, line: string] {
  if (error instanceof UsageError) return [2, error.message];
  if (SELF_EXPLAINED.some((kind) => error instanceof kind)) return [1, (error as Error).message];
  if (isDiskFull(error)) return [1, "the disk is full; free some space and run the command again"];
  if (isDamaged(error))
    return [1, `a database is damaged (${(error as Error).message}); restore it from a backup`];
  if (isLocked(error))
    return [1, "a database is locked by another process; run the command again once it lets go"];
  if (isInaccessible(error))
    return [
      1,
      `a database could not be used: SQLite says "${sqliteWords(error)}"; check that its disk has room and is writable (with --libsql-url, the libSQL server's disk)`,
    ];
  return [
    1,
    fileSystemErrorLine(error) ?? `unexpected failure: ${(error as Error).message ?? error}`,
  ];
}

/** Runs the command line on the chosen runtime (src/main.ts is Bun's entry, src/main-deno.ts Deno's). */
export async function runMain(choice: Runtime): Promise<void> {
  useRuntime(choice);
  // Data files hold customer data and secrets: everything this process creates is owner only.
  process.umask(0o077);
  const argv = commandFirst(process.argv.slice(2));
  // serve and demo keep running until a signal (their log is not the command's output);
  // the others exit with their status, 1 if their output could not be written.
  const serving =
    ["serve", "demo"].includes(argv[0] ?? "") && !argv.some((a) => a === "--help" || a === "-h");
  watchOutput();
  let code = await run(argv);
  const failure = await outputFailure();
  if (failure && !serving) {
    process.stderr.write(`storeapi: ${failure}\n`);
    code = 1;
  }
  if (code !== 0 || !serving) process.exit(code);
}
