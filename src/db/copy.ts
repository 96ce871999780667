import type { Queryable, SqlValue } from "./driver";

/** Rows read and written per statement while copying (200 rows of ≤ 40 columns stay under SQLite's 32,766 parameters). */
const BATCH = 200;

/** The tables a copy carries: every table but SQLite's own. */
async function tablesOf(db: Queryable): Promise<string[]> {
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
export async function copyRows(
  from: Queryable,
  to: Queryable,
  replace = false,
): Promise<Record<string, number>> {
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
      const columns = Object.keys(rows[0]).filter((column) => column !== "__rowid");
      const tuple = `(${columns.map(() => "?").join(", ")})`;
      // One statement per batch: on a libSQL server each statement is a round trip.
      await to.run(
        `INSERT${replace ? " OR REPLACE" : ""} INTO ${quote(table)} (${columns.map(quote).join(", ")}) VALUES ${rows.map(() => tuple).join(", ")}`,
        rows.flatMap((row) => columns.map((column) => row[column])),
      );
      last = rows[rows.length - 1].__rowid;
      counts[table] += rows.length;
    }
  }
  return counts;
}
