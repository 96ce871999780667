import { JSON_CONTENT_TYPE } from "../errors";
import type { AppContext } from "./context";

export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

const jsonHeaders = { "Content-Type": JSON_CONTENT_TYPE };

export function ok(c: AppContext, data: unknown, status: 200 | 201 = 200): Response {
  return c.body(JSON.stringify({ ok: true, data }), status, jsonHeaders);
}

export function okList<T>(c: AppContext, page: Page<T>): Response {
  return c.body(
    JSON.stringify({ ok: true, data: page.data, hasMore: page.hasMore, nextCursor: page.nextCursor }),
    200,
    jsonHeaders,
  );
}
