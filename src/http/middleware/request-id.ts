import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";

const VALID_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Echoes a well-formed incoming `X-Request-Id`, else makes one (or takes the one the API's
 * app gave a request it handed on); sets it on every answer (as a prepared header, so the
 * answer is built with it; app.onError keeps it on errors).
 */
export function requestId(): MiddlewareHandler<AppEnv> {
  return function requestIdMiddleware(c, next) {
    const incoming = c.req.header("x-request-id");
    const id =
      c.env?.requestId ?? (incoming && VALID_ID.test(incoming) ? incoming : crypto.randomUUID());
    c.set("requestId", id);
    c.header("X-Request-Id", id);
    return next();
  };
}
