import { closeSync, openSync, statSync } from "node:fs";
import type { Location } from "../db/location";
import { FILE_SYSTEM_REASONS } from "../file-system";
import { FixtureError, type LoadSummary, LoadUnfinished, loadSource } from "../load/load";
import { type FixtureSource, fileSource, UnreadableFixture } from "../load/source";
import { command, locationOf, PLATFORM_DOMAIN_FLAG, platformDomainOf } from "./args";
import { CliError } from "./errors";
import { type Progress, printJson, printLine, progressPrinter } from "./output";

/** Sections smaller than this load in a blink: no progress lines for them. */
const PROGRESS_FROM = 10_000;
/** Fewer stores than this load in a blink: no line of stores built. */
const STORES_PROGRESS_FROM = 50;

const MB = 1024 * 1024;

/** Files at least this big say how far the first of their two reads got. */
const READ_PROGRESS_FROM = 16 * MB;

/** What a failed read of the fixture file says, for the usual reasons. */
const READ_ERRORS: Record<string, string> = {
  ...FILE_SYSTEM_REASONS,
  ENOENT: "no such file",
  NOT_FILE: "not a regular file; it is read twice, so save it to a file first",
};

/** The fixture file as a stream (src/load/source.ts), once it is known to be a readable file. */
function fixtureFile(path: string): FixtureSource {
  try {
    const file = statSync(path);
    if (file.isDirectory()) throw Object.assign(new Error(), { code: "EISDIR" });
    // A pipe or device cannot be read twice (and opening a pipe waits for its writer).
    if (!file.isFile()) throw Object.assign(new Error(), { code: "NOT_FILE" });
    closeSync(openSync(path, "r"));
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new CliError(`cannot read fixture file ${path}: ${READ_ERRORS[code ?? ""] ?? message}`);
  }
  const progress = progressPrinter(0);
  return fileSource(path, (bytes, total) => {
    if (total >= READ_PROGRESS_FROM)
      progress(`reading ${path} (MB)`, Math.floor(bytes / MB), Math.floor(total / MB));
  });
}

/**
 * Progress of the pieces of work with at least `min` steps, whatever their time: what a
 * small load prints does not depend on how busy the machine is.
 */
function countedFrom(min: number): Progress {
  const print = progressPrinter(0);
  return (what, done, total) => {
    if (total >= min) print(what, done, total);
  };
}

export async function loadInto(
  dataDir: string | Location,
  source: FixtureSource,
  options: { replace: boolean; platformDomain: string; progress?: Progress },
): Promise<LoadSummary> {
  try {
    return await loadSource(dataDir, source, options);
  } catch (error) {
    if (error instanceof FixtureError)
      throw new CliError(`fixture refused, nothing loaded: ${error.message}`);
    if (error instanceof LoadUnfinished) throw new CliError(error.message);
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
    const stores = countedFrom(STORES_PROGRESS_FROM);
    const options = {
      replace: values.replace ?? false,
      platformDomain: platformDomainOf(values),
      progress: countedFrom(PROGRESS_FROM),
      storesProgress: (done: number, total: number) => stores("loading stores", done, total),
    };
    const summary = await loadInto(locationOf(values), fixtureFile(file), options).catch((error) =>
      Promise.reject(
        error instanceof UnreadableFixture ? new CliError(`${file} ${error.message}`) : error,
      ),
    );
    if (values.json) return printJson(summary);
    for (const s of summary.stores) {
      const counts = Object.entries(s.counts)
        .map(([k, n]) => `${n} ${k}`)
        .join(", ");
      printLine(`loaded ${s.slug} (${s.domain}, ${s.plan}): ${counts}`);
    }
    printLine(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  },
);
