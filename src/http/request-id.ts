import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";

const VALID_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a well-formed incoming `X-Request-Id`, else makes one; sets it on every answer. */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async function requestIdMiddleware(c, next) {
    const incoming = c.req.header("x-request-id");
    const id = incoming && VALID_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId", id);
    await next();
    c.res.headers.set("X-Request-Id", id);
  };
}
