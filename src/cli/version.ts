import Database from "libsql";
// JSON imports are embedded by `bun build --compile`: the binary reports what it was built from.
import libsqlPackage from "../../node_modules/libsql/package.json" with { type: "json" };
import storeapiPackage from "../../package.json" with { type: "json" };
import { runtime } from "../runtime/runtime";

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
    };
  } finally {
    db.close();
  }
}

/** `storeapi X.Y.Z`, then the libSQL (and its SQLite) and runtime versions it runs on. */
export function versionText(): string {
  const v = versions();
  return `storeapi ${v.storeapi}\nlibSQL ${v.libsql} (SQLite ${v.sqlite}), ${v.runtime}\n`;
}
