import type { Queryable, SqlValue } from "../db/driver";
import { storeIncarnation } from "../db/platform";
import type { AppContext } from "./context";
import { type CursorScope, decodeCursor, encodeCursor } from "./cursor";
import { okList, type Page } from "./respond";

/** An equality filter: the column a query parameter must equal. */
export interface ListFilter {
  column: string;
  /** The column's value for the parameter's (default: as given, booleans as 0/1). */
  value?: (given: never) => SqlValue;
}

/**
 * A page of rows whose size has no bound (an order's items) ends once its rows pass this
 * many bytes, though `limit` asks for more: `hasMore` and `nextCursor` say where it goes on.
 */
export const PAGE_BYTES = 2 * 1024 * 1024;

/**
 * A list endpoint, declared: its table and sort order (newest first by `sortColumn` then
 * `id`), the parameter that bounds the sort column from below, and its equality filters.
 */
export interface ListSource<Row = unknown> {
  /** Name the cursor is bound to, e.g. "orders". */
  list: string;
  table: string;
  /** Epoch-ms column the list sorts on (`created_at`, `updated_at`). */
  sortColumn: string;
  /** Columns to select (must include `id` and the sort column). */
  columns: string;
  /** The query parameter that bounds `sortColumn` from below, inclusive (`created_since`). */
  since: string;
  /** Equality filters by query parameter. */
  filters?: Record<string, ListFilter>;
  /**
   * For rows of any size: a row's bytes (a page stops past `PAGE_BYTES`), and what reads
   * the parts the list's columns leave out of large rows, for the rows the page keeps.
   */
  sized?: {
    bytes: (row: Row) => number;
    complete: (db: Queryable, rows: Row[]) => Promise<void>;
  };
}

/** A list's validated query: page size, cursor, and the source's own parameters. */
export type ListParams = { limit: number; cursor?: string } & Record<string, unknown>;

const columnValue = (filter: ListFilter, given: unknown): SqlValue =>
  filter.value
    ? filter.value(given as never)
    : typeof given === "boolean"
      ? Number(given)
      : (given as SqlValue);

/** The WHERE conditions the parameters ask for, and what the cursor is bound to. */
function filtersOf<Row>(source: ListSource<Row>, params: ListParams) {
  const conditions: string[] = [];
  const args: SqlValue[] = [];
  const bound: Record<string, unknown> = { [source.since]: params[source.since] };
  for (const [param, filter] of Object.entries(source.filters ?? {})) {
    if (params[param] === undefined) continue;
    const value = columnValue(filter, params[param]);
    conditions.push(`${filter.column} = ?`);
    args.push(value);
    bound[param] = value;
  }
  const since = params[source.since];
  if (since !== undefined) {
    conditions.push(`${source.sortColumn} >= ?`);
    args.push(since as number);
  }
  return { conditions, args, bound };
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
  source: ListSource<Row>,
  query: ListParams,
): Promise<Page<Row>> {
  const { conditions, args, bound } = filtersOf(source, query);
  const scope: CursorScope = {
    list: source.list,
    store: storeIncarnation(c.get("store")),
    filters: filterKey(bound),
  };
  const secret = c.get("deps").cursorSecret;
  if (query.cursor !== undefined) {
    const position = decodeCursor(secret, scope, query.cursor);
    conditions.push(`(${source.sortColumn}, id) < (?, ?)`);
    args.push(position.sort, position.id);
  }
  const where = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
  const sql =
    `SELECT ${source.columns} FROM ${source.table} ${where} ` +
    `ORDER BY ${source.sortColumn} DESC, id DESC LIMIT ${query.limit + 1}`;
  const db = c.get("db");
  const rows = await db.all<Row & Record<string, number>>(sql, args);
  let hasMore = rows.length > query.limit;
  if (hasMore) rows.pop();
  if (source.sized) {
    const kept = rowsWithin(rows, source.sized.bytes);
    if (kept < rows.length) {
      rows.length = kept;
      hasMore = true;
    }
    await source.sized.complete(db, rows);
  }
  const last = rows[rows.length - 1];
  const nextCursor =
    hasMore && last
      ? encodeCursor(secret, scope, { sort: last[source.sortColumn], id: last.id })
      : null;
  return { data: rows, hasMore, nextCursor };
}

/** How many of `rows`, from the first, fit in `PAGE_BYTES`: at least one. */
function rowsWithin<Row>(rows: Row[], bytes: (row: Row) => number): number {
  let total = 0;
  for (let i = 0; i < rows.length; i++) {
    total += bytes(rows[i] as Row);
    if (total > PAGE_BYTES && i > 0) return i;
  }
  return rows.length;
}

/** The list answer: one page of `source`, each row shown as `toItem` makes it. */
export async function listAnswer<Row extends { id: number }>(
  c: AppContext,
  source: ListSource<Row>,
  query: ListParams,
  toItem: (row: Row) => unknown,
): Promise<Response> {
  const page = await listPage<Row>(c, source, query);
  return okList(c, { ...page, data: page.data.map(toItem) });
}
