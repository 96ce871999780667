import type * as v from "valibot";
import type { MountableRoute } from "../app";
import type { AppContext } from "../http/context";
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

export const defineManageRoute = <P = undefined, Q = undefined, B = undefined>(
  route: ManageRoute<P, Q, B>,
) => route as unknown as ManageRoute;
