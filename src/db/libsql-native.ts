import { createRequire } from "node:module";

/** What `libsql`'s JavaScript does not expose: an embedded replica's sync without blocking. */
export interface LibsqlNative {
  databaseSyncAsync(this: unknown): Promise<unknown>;
}

/** Requires from libsql's own directory, where its loader's helpers and platform packages resolve. */
const fromLibsql = () => createRequire(createRequire(import.meta.url).resolve("libsql"));

/** libsql's own choice of platform package (the rules of its index.js). */
export function libsqlTarget(): string {
  const require = fromLibsql();
  const { currentTarget } = require("@neon-rs/load") as { currentTarget(): string };
  const { familySync, GLIBC, MUSL } = require("detect-libc") as {
    familySync(): string | null;
    GLIBC: string;
    MUSL: string;
  };
  let target = currentTarget();
  // Bun reports a musl target on glibc systems.
  if (familySync() === GLIBC) {
    if (target === "linux-x64-musl") target = "linux-x64-gnu";
    if (target === "linux-arm64-musl") target = "linux-arm64-gnu";
  }
  if (target === "linux-arm-gnueabihf" && familySync() === MUSL) target = "linux-arm-musleabihf";
  return target;
}

/**
 * libsql's native module, the platform package its own loader picks. Its synchronous API
 * syncs a replica by blocking the thread for a network round trip, and its promise API
 * cannot open a replica at all (0.5.29 passes its options one place off), so a replica is
 * opened with the first and synced through this. The compiled binary gets a static
 * require of the same `index.node` instead of this body (scripts/build.ts, which also
 * uses `libsqlTarget` to choose it).
 */
export function libsqlNative(): LibsqlNative {
  return fromLibsql()(`@libsql/${libsqlTarget()}`) as LibsqlNative;
}
