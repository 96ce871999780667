import type { SqlValue } from "../db/driver";
import type { AppContext } from "./context";
import { type CursorScope, decodeCursor, encodeCursor } from "./cursor";
import { okList, type Page } from "./respond";

/** A list endpoint's table and sort order: newest first by `sortColumn` then `id`. */
export interface ListSource {
  /** Name the cursor is bound to, e.g. "orders". */
  list: string;
  table: string;
  /** Epoch-ms column the list sorts on and `*_since` filters (`created_at`, `updated_at`). */
  sortColumn: string;
  /** Columns to select (must include `id` and the sort column). */
  columns: string;
}

export interface ListQuery {
  limit: number;
  cursor?: string;
  /** Inclusive lower bound on the sort column (epoch ms). */
  since?: number;
  /** Equality filters: column → value. */
  where?: Record<string, SqlValue>;
  /** The client's filter parameters as given, to bind the cursor to them. */
  filters: Record<string, unknown>;
}

function filterKey(filters: Record<string, unknown>): string {
  return JSON.stringify(
    Object.keys(filters)
      .filter((k) => filters[k] !== undefined)
      .sort()
      .map((k) => [k, filters[k]]),
  );
}

/**
 * One page of a keyset-paginated list (never OFFSET): rows after the cursor's
 * (sort, id) position, newest first. Index-backed, so a page deep in the table costs
 * what the first costs, and rows inserted meanwhile never shift a walk.
 */
export async function listPage<Row extends { id: number }>(
  c: AppContext,
  source: ListSource,
  query: ListQuery,
): Promise<Page<Row>> {
  const scope: CursorScope = {
    list: source.list,
    store: c.get("store").slug,
    filters: filterKey(query.filters),
  };
  const secret = c.get("deps").cursorSecret;
  const conditions: string[] = [];
  const args: SqlValue[] = [];
  for (const [column, value] of Object.entries(query.where ?? {})) {
    conditions.push(`${column} = ?`);
    args.push(value);
  }
  if (query.since !== undefined) {
    conditions.push(`${source.sortColumn} >= ?`);
    args.push(query.since);
  }
  if (query.cursor !== undefined) {
    const position = decodeCursor(secret, scope, query.cursor);
    conditions.push(`(${source.sortColumn}, id) < (?, ?)`);
    args.push(position.sort, position.id);
  }
  const where = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
  const sql =
    `SELECT ${source.columns} FROM ${source.table} ${where} ` +
    `ORDER BY ${source.sortColumn} DESC, id DESC LIMIT ${query.limit + 1}`;
  const rows = await c.get("db").all<Row & Record<string, number>>(sql, args);
  const hasMore = rows.length > query.limit;
  if (hasMore) rows.pop();
  const last = rows[rows.length - 1];
  const nextCursor =
    hasMore && last
      ? encodeCursor(secret, scope, { sort: last[source.sortColumn], id: last.id })
      : null;
  return { data: rows, hasMore, nextCursor };
}

/** The list answer: one page of `source`, each row shown as `toItem` makes it. */
export async function listAnswer<Row extends { id: number }>(
  c: AppContext,
  source: ListSource,
  query: ListQuery,
  toItem: (row: Row) => unknown,
): Promise<Response> {
  const page = await listPage<Row>(c, source, query);
  return okList(c, { ...page, data: page.data.map(toItem) });
}
