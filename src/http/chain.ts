import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";

/**
 * Several middlewares mounted as one: each one's `next` runs the following one, the
 * last one's runs the rest of the app. Hono dispatches every mounted middleware through
 * an async step of its own; inside a chain, a middleware that returns `next()` costs a
 * plain call. An error thrown anywhere in the chain is rendered as if thrown by the
 * chain, so a middleware that must see the rendered answer of a later one's error
 * (the request log) is mounted on its own.
 */
export function chain(...middlewares: MiddlewareHandler<AppEnv>[]): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    // Our middlewares answer by throwing or through the rest of the app; none returns a Response.
    const run = (i: number): Promise<void> =>
      i === middlewares.length ? next() : (middlewares[i](c, () => run(i + 1)) as Promise<void>);
    return run(0);
  };
}
