import { createRequire } from "node:module";

/** What `libsql`'s JavaScript does not expose: an embedded replica's sync without blocking. */
export interface LibsqlNative {
  databaseSyncAsync(this: unknown): Promise<unknown>;
}

/**
 * libsql's native module, the platform package its own loader picks. Its synchronous API
 * syncs a replica by blocking the thread for a network round trip, and its promise API
 * cannot open a replica at all (0.5.29 passes its options one place off), so a replica is
 * opened with the first and synced through this. The compiled binary gets a static
 * require of the same `index.node` instead of this body (scripts/build.ts).
 */
export function libsqlNative(): LibsqlNative {
  const fromLibsql = createRequire(createRequire(import.meta.url).resolve("libsql"));
  const { currentTarget } = fromLibsql("@neon-rs/load") as { currentTarget(): string };
  const { familySync, GLIBC } = fromLibsql("detect-libc") as {
    familySync(): string | null;
    GLIBC: string;
  };
  // libsql's own rule: Bun reports a musl target on glibc systems.
  const target =
    familySync() === GLIBC ? currentTarget().replace("-musl", "-gnu") : currentTarget();
  return fromLibsql(`@libsql/${target}`) as LibsqlNative;
}
