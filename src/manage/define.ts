import type * as v from "valibot";
import type { MountableRoute } from "../app";
import type { AppContext } from "../http/context";
import { type Created, idempotentAcross } from "../http/idempotency";
import type { RouteInput } from "../routes/define";

/** Where the management API is mounted (management-api.md §2). */
export const MANAGE_PREFIX = "/manage/v1";

type Schema = v.GenericSchema;

/**
 * One management endpoint, described like a store API route (src/routes/define.ts) but
 * with no permission area: a host key may call every management endpoint.
 */
export interface ManageRoute<P = Schema, Q = Schema, B = Schema>
  extends Omit<MountableRoute, "params" | "query" | "body" | "handler"> {
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  /** Relative to /manage/v1, Hono syntax: `/stores/:slug`. */
  path: string;
  params?: P & Schema;
  query?: Q & Schema;
  body?: B & Schema;
  handler: (c: AppContext, input: RouteInput<P, Q, B>) => Promise<Response>;
  /** The success status in the document when not the default (201 for `POST /stores`, else 200). */
  status?: 200 | 201;
  /** The request may come with no body at all (documented as an optional body). */
  bodyOptional?: boolean;
}

/** A management route as written: it answers (`handler`), or it creates something (`create`). */
type ManageSpec<P, Q, B> = Omit<ManageRoute<P, Q, B>, "handler" | "idempotent"> &
  (
    | { handler: ManageRoute<P, Q, B>["handler"]; create?: never; redact?: never }
    | {
        create: (c: AppContext, input: RouteInput<P, Q, B>) => Promise<Created>;
        /** Removes from the kept answer what must never be stored (a new key's secret). */
        redact?: (data: unknown) => unknown;
        handler?: never;
      }
  );

/**
 * A management endpoint. One that `create`s is idempotent: it runs once per host key and
 * `Idempotency-Key`, its answer kept in platform.db (src/http/idempotency.ts).
 */
export function defineManageRoute<P = undefined, Q = undefined, B = undefined>(
  spec: ManageSpec<P, Q, B>,
): ManageRoute {
  if (!spec.create) return spec as unknown as ManageRoute;
  const { create, redact, ...route } = spec;
  const handler: ManageRoute<P, Q, B>["handler"] = (c, input) =>
    idempotentAcross(c, () => create(c, input), redact);
  return { ...route, idempotent: true, handler } as unknown as ManageRoute;
}
