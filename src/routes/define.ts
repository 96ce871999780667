import type * as v from "valibot";
import type { ErrorCode } from "../errors";
import type { AppContext } from "../http/context";
import type { Area } from "../keys/permissions";

/** Where every route of the API is mounted. */
export const API_PREFIX = "/api/v1";

type Schema = v.GenericSchema;
type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;

export type Method = "GET" | "POST" | "PATCH";

/** Validated input handed to a route's handler. */
export interface RouteInput<P, Q, B> {
  params: Out<P>;
  query: Out<Q>;
  body: Out<B>;
}

/**
 * One endpoint: everything the app needs to mount it and the OpenAPI document needs
 * to describe it. The schemas validate input and are the same objects the document
 * is generated from.
 */
export interface RouteDef<P = Schema, Q = Schema, B = Schema> {
  method: Method;
  /** Relative to /api/v1, Hono syntax: `/orders/:id`. */
  path: string;
  area: Area;
  summary: string;
  params?: P & Schema;
  query?: Q & Schema;
  body?: B & Schema;
  /** Schema of `data` in a success answer (documentation). */
  response?: Schema;
  /** The answer is a list with `hasMore`/`nextCursor`. */
  list?: boolean;
  /** Accepts `Idempotency-Key`. */
  idempotent?: boolean;
  /** Error codes this endpoint can answer beyond the common ones (documentation). */
  errors?: ErrorCode[];
  handler: (c: AppContext, input: RouteInput<P, Q, B>) => Promise<Response>;
}

export const defineRoute = <P = undefined, Q = undefined, B = undefined>(
  route: RouteDef<P, Q, B>,
) => route as unknown as RouteDef;

/** `GET` needs read access to the route's area; `POST`/`PATCH` need write. */
export const accessFor = (method: Method) => (method === "GET" ? "read" : "write");
