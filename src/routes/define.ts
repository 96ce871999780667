import type * as v from "valibot";
import type { Queryable } from "../db/driver";
import type { ErrorCode } from "../errors";
import type { AppContext } from "../http/context";
import { type Created, idempotentCreate } from "../http/idempotency";
import { RECORD_BODY_BYTES } from "../http/json-body";
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
  /** Accepts `Idempotency-Key` (set by `defineRoute` for a route that `create`s). */
  idempotent?: boolean;
  /** Error codes this endpoint can answer beyond the common ones (documentation). */
  errors?: ErrorCode[];
  /** The largest body it reads (413 past it): `RECORD_BODY_BYTES` unless it says more. */
  maxBodyBytes?: number;
  handler: (c: AppContext, input: RouteInput<P, Q, B>) => Promise<Response>;
}

/** A route as written: it answers (`handler`), or it creates a row (`create`). */
type RouteSpec<P, Q, B> = Omit<RouteDef<P, Q, B>, "handler" | "idempotent"> &
  (
    | { handler: RouteDef<P, Q, B>["handler"]; create?: never }
    | {
        create: (c: AppContext, input: RouteInput<P, Q, B>, tx: Queryable) => Promise<Created>;
        handler?: never;
      }
  );

/**
 * A route of the API. One that `create`s is idempotent: its create runs in one
 * transaction, once per `Idempotency-Key` (src/http/idempotency.ts), and the answer is
 * `{ ok, data }` with the status it gives.
 */
export function defineRoute<P = undefined, Q = undefined, B = undefined>(
  spec: RouteSpec<P, Q, B>,
): RouteDef {
  const sized = { maxBodyBytes: RECORD_BODY_BYTES, ...spec };
  if (!sized.create) return sized as unknown as RouteDef;
  const { create, ...route } = sized;
  const handler: RouteDef<P, Q, B>["handler"] = (c, input) =>
    idempotentCreate(c, (tx) => create(c, input, tx));
  return { ...route, idempotent: true, handler } as unknown as RouteDef;
}

/** `GET` needs read access to the route's area; `POST`/`PATCH` need write. */
export const accessFor = (method: Method) => (method === "GET" ? "read" : "write");
