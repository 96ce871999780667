/**
 * Builds ./storeapi: one executable (`bun build --compile`) holding the server, the CLI,
 * fixtures/demo.json and libSQL's native module.
 *
 *   bun scripts/build.ts             build
 *   bun scripts/build.ts --if-stale  build only when a source is newer than ./storeapi
 *
 * libsql's loader (node_modules/libsql/index.js) picks `@libsql/${target}` by name at run
 * time. In a compiled binary that require cannot be resolved outside the repo ("Cannot
 * find module '@libsql/linux-x64-gnu' from '/$bunfs/root/...'"), so a plugin rewrites the
 * loader to require this machine's platform package's `index.node` by a literal path,
 * which Bun embeds. @libsql/client uses the same `libsql` package for local files.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { BunPlugin } from "bun";
import { libsqlTarget } from "../src/db/libsql-native";

const ROOT = resolve(import.meta.dir, "..");
const OUTFILE = join(ROOT, "storeapi");
const ENTRY = join(ROOT, "src/main.ts");
/** Worker threads are separate entry points of a compiled binary (src/db/checkpointer.ts finds it). */
const WORKERS = [join(ROOT, "src/db/checkpoint-worker.ts"), join(ROOT, "src/db/replica-worker.ts")];
/** Everything the binary is built from; --if-stale compares their times with the binary's. */
const INPUTS = [
  "src",
  "fixtures",
  "package.json",
  "bun.lock",
  "package-lock.json",
  "scripts/build.ts",
];

const LOADER = /function requireNative\(\) \{[\s\S]*?\n\}\n/;

/** Replaces libsql's run-time `requireNative()` with a static require of one `index.node`. */
export function libsqlNativePlugin(target: string): BunPlugin {
  const requireNative = `require(${JSON.stringify(`@libsql/${target}/index.node`)})`;
  return {
    name: "libsql-static-native",
    setup(build) {
      build.onLoad({ filter: /[\\/]node_modules[\\/]libsql[\\/]index\.js$/ }, async (args) => {
        const source = await Bun.file(args.path).text();
        if (!LOADER.test(source)) {
          throw new Error(
            `${args.path}: requireNative() not found; the libsql loader changed, update scripts/build.ts`,
          );
        }
        const fixed = source.replace(
          LOADER,
          `function requireNative() {\n  return ${requireNative};\n}\n`,
        );
        return { contents: fixed, loader: "js" };
      });
      // src/db/libsql-native.ts finds the same module at run time; here it is the one embedded.
      build.onLoad({ filter: /[\\/]src[\\/]db[\\/]libsql-native\.ts$/ }, () => ({
        contents: `export function libsqlNative() {\n  return ${requireNative};\n}\n`,
        loader: "ts",
      }));
    },
  };
}

function newestInput(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestInput(join(path, entry)));
  return newest;
}

export function isStale(): boolean {
  if (!existsSync(OUTFILE)) return true;
  const built = statSync(OUTFILE).mtimeMs;
  return INPUTS.some((input) => newestInput(join(ROOT, input)) > built);
}

/** Compiles the binary to `outfile` (default ./storeapi); returns the libsql platform package embedded. */
export async function build(outfile = OUTFILE): Promise<string> {
  const target = libsqlTarget();
  const result = await Bun.build({
    entrypoints: [ENTRY, ...WORKERS],
    compile: {
      outfile,
      // The binary behaves the same wherever it runs: no .env or bunfig.toml picked up from the cwd.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    plugins: [libsqlNativePlugin(target)],
    throw: false,
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error("build failed");
  }
  return target;
}

if (import.meta.main) {
  const ifStale = process.argv.includes("--if-stale");
  if (ifStale && !isStale()) {
    console.log("build: ./storeapi is up to date");
  } else {
    try {
      const target = await build();
      const size = (statSync(OUTFILE).size / 1024 / 1024).toFixed(0);
      console.log(
        `build: wrote ./storeapi (${size} MB, libSQL native module @libsql/${target} embedded)`,
      );
    } catch (error) {
      console.error(`build: ${(error as Error).message}`);
      process.exit(1);
    }
  }
}
