import { createHash } from "node:crypto";
import type { Db, Queryable } from "../db/driver";
import {
  type AnswerScope,
  assertClaimHeld,
  CLAIM_TTL_MS,
  ClaimLostError,
  claimScope,
  findAnswer,
  firstScopeOf,
  type HostKeyUse,
  IN_PROGRESS,
  recordScope,
  releaseClaim,
  STORE_CREATE_SCOPE,
  stillRunning,
  storeAnswer,
  UNCHECKED_CLAIM_TTL_MS,
} from "../db/idempotency";
import { ApiError, errorBody, invalidParameter } from "../errors";
import { runtime } from "../runtime/runtime";
import type { AppContext } from "./context";
import { jsonAnswer, ok } from "./respond";

/**
 * Idempotent creates (api-contract.md §6). A create sent with `Idempotency-Key` runs at
 * most once per (store, API key, Idempotency-Key) within 24 hours: its answer (status
 * and exact body) is kept in the store's `idempotency` table, written in the same
 * transaction as the created row, and replayed for the same request with
 * `Idempotent-Replayed: true`. Concurrent duplicates wait for the one that runs.
 */

/** What a create handler produces inside its transaction. */
export interface Created {
  status: 200 | 201;
  data: unknown;
}

/** A checked `Idempotency-Key` and the body it came with (set by `readIdempotencyKey`). */
export interface IdempotentRequest {
  key: string;
  body: unknown;
}

declare module "hono" {
  interface ContextVariableMap {
    idempotency: IdempotentRequest | undefined;
  }
}

const IDEMPOTENCY_HEADER = "Idempotency-Key";
const KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;
/**
 * A 4xx answer longer than this is not kept, so a record cannot grow with what a client
 * sends (with echoes cut to 100 characters none is this long); a retry is checked afresh.
 */
const MAX_KEPT_ERROR_CHARS = 4096;

/**
 * Checks the header of a route that accepts one and keeps it with the raw body for
 * `idempotentCreate`. Called by `mountRoutes` (src/app.ts) for routes marked `idempotent`,
 * after the parameters are checked and before the body is validated: a malformed key is
 * 400 `invalid_parameter` whatever the body holds.
 */
export function readIdempotencyKey(c: AppContext, rawBody: unknown): void {
  const key = c.req.header(IDEMPOTENCY_HEADER);
  if (key === undefined) return;
  if (!KEY_PATTERN.test(key)) {
    throw invalidParameter(
      IDEMPOTENCY_HEADER,
      'Header "Idempotency-Key" must be 1 to 255 visible ASCII characters (no spaces); a UUID is a good choice.',
    );
  }
  c.set("idempotency", { key, body: rawBody });
}

/** JSON with object keys sorted at every level and no whitespace (bodies are at most `MAX_BODY_DEPTH` deep). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const members = Object.keys(record)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** What makes two requests "the same": method, path and canonical body. */
export function fingerprint(method: string, path: string, body: unknown): string {
  return createHash("sha256")
    .update(`${method} ${path}\n${canonicalJson(body)}`)
    .digest("hex");
}

/** One chain of waiting requests per id: the (store, key id, Idempotency-Key) of a create. */
export class KeyedQueue {
  private tails = new Map<string, Promise<unknown>>();

  async run<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(id) ?? Promise.resolve();
    const result = previous.then(fn, fn);
    const tail = result.catch(() => {});
    this.tails.set(id, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(id) === tail) this.tails.delete(id);
    }
  }
}

/** 4xx answers are kept (the same request would fail the same way); 429 and 5xx are not. */
const keepsError = (error: unknown): error is ApiError =>
  error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429;

/**
 * Where a request's idempotency records live, and under which key id: a store's database
 * for the store API (the API key's id) and for a management call on one store (minus the
 * host key's id: store keys' ids are positive); platform.db for a store create (the host
 * key's id). The record is written where the create commits, in the same transaction,
 * wherever it can be.
 */
export interface Place {
  db: Db;
  keyId: number;
  /** The in-process queue that lines up duplicates. */
  queue: string;
  /**
   * Where such records were kept before (platform.db, by the host key's id): one kept there
   * for the same request is replayed, so a retry across an upgrade creates nothing again.
   * Records live 24 hours; after that this finds none.
   */
  earlier?: { db: Db; keyId: number };
  /**
   * A management create's: its key is scoped to the host key, not to where its answer is
   * kept, so a key first used in another scope (store) is refused (src/db/idempotency.ts
   * `HostKeyUse`).
   */
  host?: { platform: Db } & Omit<HostKeyUse, "key">;
}

/** The store API's place: the store the request is for, under its API key. */
const storeApiPlace = (c: AppContext): Place => ({
  db: c.get("db"),
  keyId: c.get("key").id,
  queue: `${c.get("store").slug}\n${c.get("key").id}`,
});

/** A management call's place on the store `slug` (whose database `db` is). */
export const hostPlaceIn = (c: AppContext, slug: string, db: Db): Place => {
  const { db: earlier, keyId } = platformPlace(c);
  return {
    db,
    keyId: -c.get("hostKey").id,
    queue: `${slug}\nhost ${c.get("hostKey").id}`,
    earlier: { db: earlier, keyId },
    host: { platform: earlier, hostKeyId: keyId, scope: slug },
  };
};

/** A management call's place for what is no one store's: platform.db. */
function platformPlace(c: AppContext): Place {
  const platform = c.get("deps").manage?.platform;
  if (!platform) throw new Error("the management API answered without its platform database");
  const hostKeyId = c.get("hostKey").id;
  return {
    db: platform.db,
    keyId: hostKeyId,
    queue: `host\n${hostKeyId}`,
    host: { platform: platform.db, hostKeyId, scope: STORE_CREATE_SCOPE },
  };
}

const usedForAnotherRequest = () =>
  invalidParameter(
    IDEMPOTENCY_HEADER,
    'Header "Idempotency-Key" was already used for a different request in the last 24 hours; use a new key for a new request.',
  );

const nothingToNote = (_at: number) => {};

/**
 * Refuses a host key's `Idempotency-Key` first used in another scope (another store, or a
 * store create). Returns a function that records this scope for the key once an answer is
 * kept (a no-op where that is known already, or off the management API).
 */
async function refuseUsedElsewhere(place: Place, key: string, now: number) {
  const host = place.host;
  if (!host) return nothingToNote;
  const use: HostKeyUse = { hostKeyId: host.hostKeyId, key, scope: host.scope };
  const first = await firstScopeOf(host.platform, use, now);
  if (first !== undefined && first !== host.scope) throw usedForAnotherRequest();
  if (first !== undefined) return nothingToNote;
  // Written beside the answer, not before it, so a create never waits for platform.db (an
  // operator's lock on it held every lead back). Not written (platform.db busy, a crash
  // first), a use of the key elsewhere is not refused; the store's own record still makes
  // each create run once.
  return (at: number) => void recordScope(host.platform, use, at).catch(() => {});
}

/** The answer kept for the same request where `place` kept its records before, if any. */
async function keptEarlier(place: Place, key: string, print: string, now: number) {
  if (!place.earlier) return undefined;
  const kept = await findAnswer(place.earlier.db, { keyId: place.earlier.keyId, key }, now);
  return kept && kept.fingerprint === print && kept.status !== IN_PROGRESS ? kept : undefined;
}

/** How often a duplicate looks again at a create running on another server. */
const WAIT_STEP_MS = 50;
/**
 * How long a duplicate waits for a create running on another server before it answers 503:
 * a crashed server's create is taken over only when its claim runs out (up to 60 s), and
 * a request held that long would meet a proxy's timeout (nginx: 60 s) or Bun's idle cut.
 */
const DUPLICATE_WAIT_MS = 8_000;

/** 503 for a duplicate whose first request still runs elsewhere: retry once its claim may have run out. */
const stillRunningElsewhere = (record: { created_at: number }, now: number, ttl: number) => {
  // At most 10: the first may still finish well before its claim runs out.
  const seconds = Math.min(10, Math.max(1, Math.ceil((record.created_at + ttl - now) / 1000)));
  return new ApiError(
    "service_unavailable",
    `A request with this Idempotency-Key is still running on another server (or one that stopped); retry in ${seconds} seconds to get its answer.`,
    {},
    { "Retry-After": String(seconds) },
  );
};

/**
 * Runs `execute` once per (store, key id, Idempotency-Key) — (host key, Idempotency-Key)
 * on the management API: a stored answer for the same request is replayed, one for a
 * different request is 400. Concurrent duplicates queue in this process. On a libSQL
 * server, which several nodes may share, the create is also marked running in the
 * database first, so a duplicate reaching another node waits for its answer
 * (src/db/idempotency.ts `claimScope`).
 */
function once(
  c: AppContext,
  place: Place,
  request: IdempotentRequest,
  /** `claim`: the token of this create's claim on a libSQL server (`claimScope`), else null. */
  execute: (scope: AnswerScope, print: string, claim: string | null) => Promise<Response>,
  claimTtl = CLAIM_TTL_MS,
) {
  const scope: AnswerScope = { keyId: place.keyId, key: request.key };
  const print = fingerprint(c.req.method, c.req.path, request.body);
  const deps = c.get("deps");
  return deps.idempotencyQueue.run(`${place.queue}\n${scope.key}`, async () => {
    const noteUse = await refuseUsedElsewhere(place, scope.key, deps.now());
    // Any kept answer uses the key: a 201, and a 4xx (`rememberError` keeps it, then throws).
    const run = async (claim: string | null) => {
      try {
        const answered = await execute(scope, print, claim);
        noteUse(deps.now());
        return answered;
      } catch (error) {
        if (keepsError(error)) noteUse(deps.now());
        throw error;
      }
    };
    const waitUntil = performance.now() + DUPLICATE_WAIT_MS;
    for (;;) {
      const now = deps.now();
      const previous =
        (await findAnswer(place.db, scope, now)) ??
        (await keptEarlier(place, scope.key, print, now));
      if (previous && previous.fingerprint !== print) throw usedForAnotherRequest();
      if (previous && previous.status !== IN_PROGRESS) {
        noteUse(now); // a record lost before (platform.db was busy) is written at the retry
        return jsonAnswer(c, previous.body, previous.status, { "Idempotent-Replayed": "true" });
      }
      if (previous && stillRunning(previous, now, claimTtl)) {
        if (performance.now() > waitUntil) throw stillRunningElsewhere(previous, now, claimTtl);
        await runtime().sleep(WAIT_STEP_MS);
        continue;
      }
      // Files are served by one process (the data directory's lock): the queue above is enough.
      if (!deps.pool.location.remote) return run(null);
      const claim = await claimScope(place.db, scope, print, now, claimTtl);
      if (!claim) continue;
      try {
        return await run(claim);
      } catch (error) {
        if (error instanceof ClaimLostError) continue;
        await releaseClaim(place.db, scope, claim).catch(() => {});
        throw error;
      }
    }
  });
}

/** Stores a 4xx answer under the request's key (not 429: a retry may succeed; not an outsized one), then throws it. */
async function rememberError(
  c: AppContext,
  place: Place,
  scope: AnswerScope,
  print: string,
  error: unknown,
): Promise<never> {
  if (keepsError(error)) {
    const stored = { fingerprint: print, status: error.status, body: errorBody(error) };
    if (stored.body.length <= MAX_KEPT_ERROR_CHARS) {
      await place.db.transaction((tx) => storeAnswer(tx, scope, stored, c.get("deps").now()));
    }
  }
  throw error;
}

/**
 * A request to an idempotent route whose body failed validation: with an
 * `Idempotency-Key` that answer is stored and replayed like any other 4xx (§6), where the
 * route keeps its records. A management call on a store that does not exist keeps none.
 */
export function idempotentRejection(c: AppContext, error: ApiError): Promise<Response> {
  const request = c.get("idempotency");
  if (!request) throw error;
  const remember = (place: Place) =>
    once(c, place, request, (scope, print) => rememberError(c, place, scope, print, error));
  if (!c.get("hostKey")) return remember(storeApiPlace(c));
  const slug = c.req.param("slug");
  if (slug === undefined) return remember(platformPlace(c));
  const { registry, pool } = c.get("deps");
  if (!registry.get(slug)) throw error;
  return pool.use(slug, (db) => remember(hostPlaceIn(c, slug, db)));
}

/**
 * Runs `create` in one transaction and answers `{ ok: true, data }` with its status.
 * With an `Idempotency-Key` the answer is stored in that same transaction (a created
 * row never exists without its record) and a repeat within 24 h replays it instead.
 * An ApiError 4xx thrown by `create` rolls the create back, is stored on its own and
 * rethrown; anything else (5xx, 429) is not stored, so a retry may succeed.
 */
export async function idempotentCreate(
  c: AppContext,
  create: (tx: Queryable) => Promise<Created>,
  place = storeApiPlace(c),
  /** Removes from the kept answer what must never be stored (a new key's secret). */
  redact?: (data: unknown) => unknown,
): Promise<Response> {
  const { db } = place;
  const request = c.get("idempotency");
  if (!request) {
    const created = await db.transaction(create);
    return ok(c, created.data, created.status);
  }
  return once(c, place, request, async (scope, print, claim) => {
    try {
      const answer = await db.transaction(async (tx) => {
        if (claim) await assertClaimHeld(tx, scope, claim);
        const { status, data } = await create(tx);
        const body = JSON.stringify({ ok: true, data });
        const keptBody = redact ? JSON.stringify({ ok: true, data: redact(data) }) : body;
        await storeAnswer(
          tx,
          scope,
          { fingerprint: print, status, body: keptBody },
          c.get("deps").now(),
        );
        return { status, body };
      });
      return jsonAnswer(c, answer.body, answer.status);
    } catch (error) {
      return rememberError(c, place, scope, print, error);
    }
  });
}

/** Keeps a create's answer as its idempotency record, in the transaction that commits what it made. */
export type KeepAnswer = (tx: Queryable, created: Created) => Promise<void>;

/**
 * For a create whose rows live in another database than its record (a store created
 * through the management API: its own database, then its registration in platform.db,
 * where the record is): `create` calls `keep` inside the registration's transaction, so a
 * store is never registered without its record (a retry after a crash replays the answer).
 */
export async function idempotentAcross(
  c: AppContext,
  create: (keep: KeepAnswer) => Promise<Created>,
): Promise<Response> {
  const request = c.get("idempotency");
  if (!request) {
    const created = await create(async () => {});
    return ok(c, created.data, created.status);
  }
  const place = platformPlace(c);
  return once(
    c,
    place,
    request,
    async (scope, print) => {
      try {
        const created = await create((tx, { status, data }) => {
          const body = JSON.stringify({ ok: true, data });
          return storeAnswer(tx, scope, { fingerprint: print, status, body }, c.get("deps").now());
        });
        return ok(c, created.data, created.status);
      } catch (error) {
        return rememberError(c, place, scope, print, error);
      }
    },
    UNCHECKED_CLAIM_TTL_MS,
  );
}
