import { readFileSync } from "node:fs";
import type { Location } from "../db/location";
import { FixtureError, type LoadSummary, loadFixture } from "../load/load";
import { command, locationOf, PLATFORM_DOMAIN_FLAG, platformDomainOf, printJson } from "./args";
import { CliError } from "./errors";

/** Sections smaller than this load in a blink: no progress lines for them. */
const PROGRESS_FROM = 10_000;

/** Progress on stderr, at most a line a second, so stdout stays clean for --json. */
export function progressPrinter(from = PROGRESS_FROM) {
  let last = 0;
  return (what: string, done: number, total: number) => {
    if (total < from) return;
    const now = Date.now();
    if (done !== total && now - last < 1000) return;
    last = now;
    process.stderr.write(`${what}: ${done}/${total}\n`);
  };
}

/** What a failed read of the fixture file says, for the usual reasons. */
const READ_ERRORS: Record<string, string> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EISDIR: "it is a directory",
};

function readFixtureFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const why = (code && READ_ERRORS[code]) ?? message;
    throw new CliError(`cannot read fixture file ${path}: ${why}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
}

export async function loadInto(
  dataDir: string | Location,
  json: unknown,
  { replace, quiet, platformDomain }: { replace: boolean; quiet: boolean; platformDomain: string },
): Promise<LoadSummary> {
  try {
    return await loadFixture(dataDir, json, {
      replace,
      platformDomain,
      progress: quiet ? undefined : progressPrinter(),
    });
  } catch (error) {
    if (error instanceof FixtureError)
      throw new CliError(`fixture refused, nothing loaded: ${error.message}`);
    throw error;
  }
}

export const loadCommand = command(
  {
    name: "load",
    args: ["FILE"],
    summary: "Load a fixture file into the data directory, all or nothing.",
    flags: {
      replace: { type: "boolean", help: "load over stores that already exist" },
      "platform-domain": PLATFORM_DOMAIN_FLAG,
    },
  },
  async ({ values, args: [file] }) => {
    const started = Date.now();
    const options = {
      replace: values.replace ?? false,
      quiet: false,
      platformDomain: platformDomainOf(values),
    };
    const summary = await loadInto(locationOf(values), readFixtureFile(file), options);
    if (values.json) return printJson(summary);
    for (const s of summary.stores) {
      const counts = Object.entries(s.counts)
        .map(([k, n]) => `${n} ${k}`)
        .join(", ");
      console.log(`loaded ${s.slug} (${s.domain}, ${s.plan}): ${counts}`);
    }
    console.log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  },
);
