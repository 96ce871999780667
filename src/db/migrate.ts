import { type Db, SchemaTooNewError } from "./driver";

/** A forward-only schema step; `version` numbers are 1, 2, 3… and never reused. */
export interface Migration {
  version: number;
  sql: string;
}

/** The schema version a database records (0: none yet). */
export async function schemaVersion(db: Db): Promise<number> {
  return (await db.get<{ user_version: number }>("PRAGMA user_version"))?.user_version ?? 0;
}

/** The newest version `migrations` bring a database to. */
export const latestVersion = (migrations: Migration[]) =>
  Math.max(0, ...migrations.map((m) => m.version));

/** Brings the schema up to date; with no migrations given (known current) reads nothing. */
export async function migrate(db: Db, migrations: Migration[]): Promise<void> {
  if (migrations.length === 0) return;
  const current = await schemaVersion(db);
  const known = latestVersion(migrations);
  if (current > known) throw new SchemaTooNewError(current, known);
  const pending = migrations
    .filter((m) => m.version > current)
    .sort((a, b) => a.version - b.version);
  for (const migration of pending) {
    await db.transaction(async (tx) => {
      for (const statement of splitStatements(migration.sql)) await tx.run(statement);
      await tx.run(`PRAGMA user_version = ${migration.version}`);
    });
  }
}

function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
