import { TrieRouter } from "hono/router/trie-router";
import { ApiError, echo } from "../errors";

export interface RoutePath {
  method: string;
  /** Hono syntax: `/api/v1/orders/:id`. */
  path: string;
}

/** A 404 naming the path as sent, cut short and with any key in it as its hint; `more` adds a sentence part. */
export const noEndpoint = (path: string, more = "") =>
  new ApiError("not_found", `There is no endpoint at ${echo(path)}${more}.`);

/** A 405 naming the path's methods; HEAD with GET, since every GET answers HEAD too. */
export function methodNotAllowed(methods: string[]): ApiError {
  const allow = methods.flatMap((m) =>
    m === "GET" && !methods.includes("HEAD") ? [m, "HEAD"] : [m],
  );
  return new ApiError(
    "method_not_allowed",
    `This path accepts only ${allow.join(", ")}.`,
    {},
    { Allow: allow.join(", ") },
  );
}

/**
 * Which methods a path has, asked of Hono's own router built from the route list: the
 * one place that tells a 405 (the path exists with other methods) from a 404.
 */
export class RouteTable {
  private readonly router = new TrieRouter<string>();
  private readonly methods = new Set<string>();

  constructor(routes: RoutePath[]) {
    for (const { method, path } of routes) {
      this.router.add(method, path, path);
      this.methods.add(method);
    }
  }

  /** The methods of the routes matching `path`; a literal path wins over `:param` ones (/products/batch is not /products/:id). */
  allowed(path: string): string[] {
    const found: RoutePath[] = [];
    for (const method of this.methods) {
      for (const [pattern] of this.router.match(method, path)[0])
        found.push({ method, path: pattern });
    }
    const literal = found.filter((route) => route.path === path);
    return [...new Set((literal.length ? literal : found).map((route) => route.method))].sort();
  }

  /** The answer for a request no route took: 405 naming the path's methods, or `notFound`. */
  refusal(path: string, notFound: () => ApiError): ApiError {
    const allow = this.allowed(path);
    return allow.length ? methodNotAllowed(allow) : notFound();
  }
}
