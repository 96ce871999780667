import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

/**
 * The tools API users run on an OpenAPI document (issue 16), run from node_modules,
 * offline (Redocly's telemetry and update check are off), in a work directory inside
 * node_modules so a client program resolves openapi-fetch and @types/bun as a user's would.
 */

const ROOT = join(import.meta.dir, "..");
const BUN = process.execPath;
const bin = (path: string) => join(ROOT, "node_modules", path);

/** tsc and the linters on a busy, shared 2-core machine. */
export const TOOL_TIMEOUT = 180_000;

type Json = Record<string, any>;

/** A fresh work directory under node_modules/.cache (remove it when done). */
export function toolWorkDir(prefix: string): string {
  mkdirSync(bin(".cache"), { recursive: true });
  return mkdtempSync(bin(`.cache/${prefix}`));
}

export async function run(work: string, command: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(command, {
    cwd: work,
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
    env: { ...process.env, ...env },
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** `METHOD /path operationId` for every operation of a document. */
export function documentedOperations(document: Json): string[] {
  const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
  return Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    methods.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${path} ${item[m].operationId}`),
  );
}

/** Spectral (`spectral:oas`): `error|warning rule` for each problem in `file` of `work`. */
export async function spectralProblems(work: string, file: string): Promise<string[]> {
  const lint = await run(work, [
    BUN,
    bin("@stoplight/spectral-cli/dist/index.js"),
    "lint",
    file,
    "-r",
    join(ROOT, ".spectral.yaml"),
    "-f",
    "json",
    "--quiet",
  ]);
  const problems = JSON.parse(lint.stdout) as Array<{ code: string; severity: number }>;
  return problems.map((p) => `${p.severity === 0 ? "error" : "warning"} ${p.code}`);
}

/** Redocly (`recommended`): its error count and `severity rule` for each problem. */
export async function redoclyProblems(
  work: string,
  file: string,
): Promise<{ errors: number; problems: string[] }> {
  const lint = await run(
    work,
    [
      BUN,
      bin("@redocly/cli/bin/cli.js"),
      "lint",
      file,
      "--config",
      join(ROOT, "redocly.yaml"),
      "--format",
      "json",
    ],
    {
      REDOCLY_TELEMETRY: "off",
      REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
    },
  );
  const report = JSON.parse(lint.stdout) as {
    totals: { errors: number };
    problems: Array<{ ruleId: string; severity: string }>;
  };
  return {
    errors: report.totals.errors,
    problems: report.problems.map((p) => `${p.severity} ${p.ruleId}`),
  };
}

/** openapi-typescript: writes `api.ts` beside `file` and returns the names of its operations. */
export async function generatedOperations(work: string, file: string): Promise<string[]> {
  const generate = await run(work, [
    BUN,
    bin("openapi-typescript/bin/cli.js"),
    file,
    "-o",
    "api.ts",
  ]);
  if (generate.code !== 0) throw new Error(`openapi-typescript failed: ${generate.stderr}`);
  const types = readFileSync(join(work, "api.ts"), "utf8");
  const operations =
    types.slice(types.indexOf("export interface operations {")).match(/^ {4}[A-Za-z]+(?=: \{)/gm) ??
    [];
  return operations.map((o) => o.trim());
}

/** The program's code without comments (to check it has no casts or escape hatches). */
export const codeOf = (program: string) =>
  readFileSync(program, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");

/** Copies `program` into `work` and type-checks it under `tsc --strict`: its output (empty when it compiles). */
export async function compileStrict(
  work: string,
  program: string,
): Promise<{ code: number; output: string }> {
  copyFileSync(program, join(work, basename(program)));
  const compilerOptions = {
    strict: true,
    noEmit: true,
    target: "ES2022",
    module: "ESNext",
    moduleResolution: "bundler",
    types: ["bun"],
    skipLibCheck: true,
  };
  writeFileSync(
    join(work, "tsconfig.json"),
    JSON.stringify({ compilerOptions, files: [basename(program)] }),
  );
  const tsc = await run(work, [BUN, bin("typescript/bin/tsc"), "-p", "tsconfig.json"]);
  return { code: tsc.code, output: tsc.stdout + tsc.stderr };
}

/** Runs a program (copied by compileStrict) with Bun. */
export const runProgram = (work: string, program: string, env: Record<string, string>) =>
  run(work, [BUN, basename(program)], env);
