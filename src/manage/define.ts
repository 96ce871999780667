import type * as v from "valibot";
import type { MountableRoute } from "../app";
import type { Db, Queryable } from "../db/driver";
import type { AppContext } from "../http/context";
import {
  type Created,
  hostPlaceIn,
  idempotentAcross,
  idempotentCreate,
  type KeepAnswer,
} from "../http/idempotency";
import type { RouteInput } from "../routes/define";
import { storeOr404 } from "./context";
import { changeKeys } from "./keys/change";

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

/** A management route as written: it answers (`handler`), or it creates something. */
type ManageSpec<P, Q, B> = Omit<ManageRoute<P, Q, B>, "handler" | "idempotent"> &
  (
    | { handler: ManageRoute<P, Q, B>["handler"]; create?: never; createInStore?: never }
    | {
        /**
         * Creates what is no one store's (a store): its idempotency record is in platform.db,
         * written by `keep` in the transaction that registers it.
         */
        create: (c: AppContext, input: RouteInput<P, Q, B>, keep: KeepAnswer) => Promise<Created>;
        handler?: never;
        createInStore?: never;
      }
    | {
        /**
         * Creates in the store the path names (`:slug`), inside a transaction on its
         * database, where the idempotency record is written in the same transaction.
         */
        createInStore: (
          c: AppContext,
          input: RouteInput<P, Q, B>,
          tx: Queryable,
        ) => Promise<Created>;
        /** Removes from the kept answer what must never be stored (a new key's secret). */
        redact?: (data: unknown) => unknown;
        /** The create changes the store's keys: servers reload them (`AppDeps.changeKeys`). */
        changesKeys?: boolean;
        handler?: never;
        create?: never;
      }
  );

/**
 * A management endpoint. One that creates is idempotent: it runs once per host key and
 * `Idempotency-Key` (per store, for a create in one store), src/http/idempotency.ts.
 */
export function defineManageRoute<P = undefined, Q = undefined, B = undefined>(
  spec: ManageSpec<P, Q, B>,
): ManageRoute {
  if (spec.create) {
    const { create, ...route } = spec;
    const handler: ManageRoute<P, Q, B>["handler"] = (c, input) =>
      idempotentAcross(c, (keep) => create(c, input, keep));
    return { ...route, idempotent: true, handler } as unknown as ManageRoute;
  }
  if (spec.createInStore) {
    const { createInStore, redact, changesKeys, ...route } = spec;
    const handler: ManageRoute<P, Q, B>["handler"] = (c, input) => {
      const { slug } = storeOr404(c, (input.params as { slug: string }).slug);
      const run = (db: Db) =>
        idempotentCreate(c, (tx) => createInStore(c, input, tx), hostPlaceIn(c, slug, db), redact);
      return changesKeys ? changeKeys(c, slug, run) : c.get("deps").pool.use(slug, run);
    };
    return { ...route, idempotent: true, handler } as unknown as ManageRoute;
  }
  return spec as unknown as ManageRoute;
}
