import type { Queryable } from "../db/driver";
import type { AppContext } from "./context";
import { ok } from "./respond";

/** What a create handler produces inside its transaction. */
export interface Created {
  status: 200 | 201;
  data: unknown;
}

/**
 * Runs a create at most once per `Idempotency-Key` (api-contract.md §6).
 * PLACEHOLDER: the customers issue implements keys, fingerprints, replay and
 * concurrency behind this signature; until then it just runs the create.
 */
export async function idempotentCreate(c: AppContext, create: (tx: Queryable) => Promise<Created>): Promise<Response> {
  const created = await c.var.db.transaction(create);
  return ok(c, created.data, created.status);
}
