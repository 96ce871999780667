import Database from "libsql";
// JSON imports are embedded by `bun build --compile`: the binary reports what it was built from.
import libsqlPackage from "../../node_modules/libsql/package.json" with { type: "json" };
import storeapiPackage from "../../package.json" with { type: "json" };
import { platformMigrations, storeMigrations } from "../db/migrations";
import { runtime } from "../runtime/runtime";

/** The newest schema version a list of migrations brings a database to. */
const newest = (migrations: Array<{ version: number }>) => migrations.at(-1)?.version ?? 0;

/** This build's version, and the libSQL binding, SQLite and runtime it runs on. */
export function versions() {
  const db = new Database(":memory:");
  try {
    const { version: sqlite } = db.prepare("SELECT sqlite_version() AS version").get() as {
      version: string;
    };
    return {
      storeapi: storeapiPackage.version,
      libsql: libsqlPackage.version,
      sqlite,
      runtime: runtime().version,
      // What it migrates databases to: two builds with the same version number may differ.
      schema: { platform: newest(platformMigrations), store: newest(storeMigrations) },
    };
  } finally {
    db.close();
  }
}

/** `storeapi X.Y.Z`, then the libSQL (and its SQLite) and runtime versions it runs on, then its schema versions. */
export function versionText(): string {
  const v = versions();
  return (
    `storeapi ${v.storeapi}\nlibSQL ${v.libsql} (SQLite ${v.sqlite}), ${v.runtime}\n` +
    `schema: platform.db ${v.schema.platform}, stores ${v.schema.store}\n`
  );
}
