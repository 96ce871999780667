#!/usr/bin/env bun
import { demoCommand } from "./cli/demo";
import { CliError, UsageError } from "./cli/errors";
import { keysCommand } from "./cli/keys";
import { loadCommand } from "./cli/load";
import { mailCommand } from "./cli/mail";
import { openapiCommand } from "./cli/openapi";
import { serveCommand } from "./cli/serve";
import { storesCommand } from "./cli/stores";
import { bunRuntime } from "./runtime/bun";
import { type Runtime, useRuntime } from "./runtime/runtime";

const HELP = `storeapi: a multi-tenant Store Management API server

Usage: storeapi COMMAND [flags]        (every command takes --data DIR and --json)

  serve [flags]            serve every store in the data directory
  demo [flags]             load the demo stores into ./demo-data and serve them on 127.0.0.1:8080
  load FILE [--replace]    load a fixture file
  stores add SLUG --domain D --plan P --owner-email E [--name N]
  stores set SLUG [--plan P] [--domain D] [--manual-approval on/off] [--notify-status on/off] [--registration on/off]
  stores list
  keys create SLUG --name N [--products P] [--orders P] [--customers P] [--leads P] [--expires never/30d/90d/1y]
  keys list SLUG
  keys delete SLUG ID
  mail list [--store SLUG]
  openapi                  print the OpenAPI document

serve flags: --listen HOST:PORT  --tls-cert FILE --tls-key FILE  --trust-proxy CIDRS  --allow-http
  --platform-domain D  --rate-limit N  --auth-failure-limit N  --smtp URL  --mail-dir DIR
  --mail-from ADDR  --log-level L     (each also STOREAPI_<NAME>, e.g. STOREAPI_LISTEN)
`;

const COMMANDS: Record<string, (argv: string[]) => Promise<void>> = {
  serve: serveCommand,
  demo: demoCommand,
  load: loadCommand,
  stores: storesCommand,
  keys: keysCommand,
  mail: mailCommand,
  openapi: openapiCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(HELP);
    return command === undefined ? 2 : 0;
  }
  try {
    // Own keys only: "constructor" or "__proto__" is an unknown command, not Object's.
    if (!Object.hasOwn(COMMANDS, command)) throw new UsageError(`unknown command "${command}"; run storeapi --help`);
    const run = COMMANDS[command];
    if (rest.includes("--help")) {
      process.stdout.write(HELP);
      return 0;
    }
    await run(rest);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`storeapi: ${error.message}\n`);
      return 2;
    }
    if (error instanceof CliError) {
      process.stderr.write(`storeapi: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`storeapi: unexpected failure: ${(error as Error).message ?? error}\n`);
    return 1;
  }
}

/** Resolves once everything written to stdout so far has been handed to the OS (pipes are async). */
const stdoutFlushed = () => new Promise<void>((resolve) => process.stdout.write("", () => resolve()));

/** Runs the command line on the chosen runtime (this file is Bun's entry, src/main-deno.ts Deno's). */
export async function runMain(choice: Runtime): Promise<void> {
  useRuntime(choice);
  const code = await main(process.argv.slice(2));
  await stdoutFlushed();
  // serve and demo keep running until a signal; the others exit with their status.
  if (code !== 0 || !["serve", "demo"].includes(process.argv[2] ?? "")) process.exit(code);
}

if (import.meta.main) await runMain(bunRuntime);
