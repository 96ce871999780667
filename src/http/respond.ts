import type { ContentfulStatusCode } from "hono/utils/http-status";
import { JSON_CONTENT_TYPE } from "../errors";
import type { AppContext } from "./context";

export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** An answer whose body is JSON text already serialised. */
export function jsonAnswer(
  c: AppContext,
  body: string,
  status: number = 200,
  headers: Record<string, string> = {},
): Response {
  return c.body(body, status as ContentfulStatusCode, {
    "Content-Type": JSON_CONTENT_TYPE,
    ...headers,
  });
}

export function ok(c: AppContext, data: unknown, status: 200 | 201 = 200): Response {
  return jsonAnswer(c, JSON.stringify({ ok: true, data }), status);
}

export function okList<T>(c: AppContext, page: Page<T>): Response {
  return jsonAnswer(
    c,
    JSON.stringify({
      ok: true,
      data: page.data,
      hasMore: page.hasMore,
      nextCursor: page.nextCursor,
    }),
  );
}
