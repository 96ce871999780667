import type { Db, Queryable, SqlValue } from "./driver";

/** Rows read and written per statement while copying. */
const BATCH = 200;

/** The tables a copy carries: every table but SQLite's own. */
async function tablesOf(db: Db): Promise<string[]> {
  const rows = await db.all<{ name: string }>(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
  );
  return rows.map((row) => row.name);
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Copies every row of every table of `from` into the same tables of `to` (same schema:
 * both were migrated by the same migrations), in rowid order and in batches, so a store
 * of any size never sits in memory at once. `replace` overwrites rows with the same key.
 * Returns the number of rows copied per table.
 */
export async function copyRows(from: Db, to: Queryable, replace = false): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of await tablesOf(from)) {
    counts[table] = 0;
    let last: SqlValue = null;
    for (;;) {
      const rows: Array<Record<string, SqlValue>> = await from.all(
        `SELECT rowid AS __rowid, * FROM ${quote(table)} WHERE ? IS NULL OR rowid > ? ORDER BY rowid LIMIT ${BATCH}`,
        [last, last],
      );
      if (rows.length === 0) break;
      for (const { __rowid, ...row } of rows) {
        const columns = Object.keys(row);
        await to.run(
          `INSERT${replace ? " OR REPLACE" : ""} INTO ${quote(table)} (${columns.map(quote).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
          Object.values(row),
        );
        last = __rowid;
      }
      counts[table] += rows.length;
    }
  }
  return counts;
}
