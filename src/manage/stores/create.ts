import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type * as v from "valibot";
import { arrivingCopy, FileLocation, LibsqlAdminError, storeDbPath } from "../../db/location";
import { writeStore } from "../../db/platform";
import { crashPoint, moveIntoPlace } from "../../db/staging";
import { ApiError } from "../../errors";
import { removeDatabase } from "../../file-system";
import type { AppContext } from "../../http/context";
import type { Created, KeepAnswer } from "../../http/idempotency";
import { buildStoreDb, fillStoreNamespace, planFixture } from "../../load/load";
import { outlineObject } from "../../load/source";
import { changeStores, manageDeps, reloadRegistry } from "../context";
import { defineManageRoute } from "../define";
import { createStoreBody, refuseTakenDomain, storeOut, toStoreJson } from "./schema";

type NewStoreBody = v.InferOutput<typeof createStoreBody>;

const slugTaken = (slug: string) =>
  new ApiError("slug_taken", `A store with slug "${slug}" already exists; choose another slug.`, {
    field: "slug",
  });

/** A server started without `--libsql-admin-url` cannot make namespaces: 503 naming why. */
function refuseWithoutAdmin(error: unknown): never {
  if (error instanceof LibsqlAdminError)
    throw new ApiError(
      "service_unavailable",
      `This server cannot create stores: ${error.message}.`,
    );
  throw error;
}

/**
 * All or nothing across a crash: the store's database is built in a temporary file and
 * renamed into place (on a libSQL server: its namespace made and filled), and only then
 * registered in platform.db. A crash before the registration leaves an unregistered
 * file or namespace, which the next create of that slug replaces.
 */
async function provision(
  c: AppContext,
  body: NewStoreBody,
  now: number,
  keep: KeepAnswer,
): Promise<Created> {
  const { registry, pool } = c.get("deps");
  await refuseTaken(c, body);
  // The loader's rules and code build the file (operations.md fixture format); the body
  // already passed the same rules, so this cannot refuse it.
  const [plan] = planFixture(outlineObject({ stores: [body] }), {
    now,
    platformDomain: registry.platformDomain,
  });
  // A leftover database may still be open here (the mail worker or key usage touched it): a
  // connection to the replaced one would keep reading the old one.
  if (pool.location instanceof FileLocation) {
    const finalPath = storeDbPath(pool.location.dataDir, body.slug);
    mkdirSync(join(pool.location.dataDir, "stores"), { recursive: true });
    const tempPath = `${finalPath}.creating`;
    try {
      await buildStoreDb(tempPath, plan, [], {});
      await pool.closeStore(body.slug, () => moveIntoPlace(tempPath, finalPath));
    } catch (error) {
      // What a full disk let it write, where nothing would ever clear it.
      removeDatabase(tempPath);
      rmSync(arrivingCopy(finalPath), { force: true });
      throw error;
    }
  } else {
    await pool.closeStore(body.slug);
    await pool.location.createStore(body.slug).catch(refuseWithoutAdmin);
    await fillStoreNamespace(pool.location, plan, [], {});
  }
  // The answer is the store as registered: a retry after a crash replays it (`keep`).
  const store = { ...plan.store, keysVersion: now, mailVersion: now, createdAt: now };
  const statuses = plan.input.orderStatuses.toSorted((a, b) => a.id - b.id);
  const created = {
    status: 201 as const,
    data: toStoreJson(store, registry.platformDomain, statuses),
  };
  // `stores set` may have given the domain to another store since the check.
  await manageDeps(c)
    .platform.db.transaction(async (tx) => {
      await writeStore(tx, plan.store, now);
      await keep(tx, created);
    })
    .catch(async (error) => {
      await pool.location.deleteStore(body.slug); // not registered: no leftover
      await refuseTaken(c, body);
      throw error;
    });
  crashPoint("store-registered");
  await reloadRegistry(c);
  return created;
}

/** slug_taken, then domain_taken, as platform.db has it now (the CLI may have added a store a moment ago). */
async function refuseTaken(c: AppContext, body: NewStoreBody): Promise<void> {
  const { registry } = c.get("deps");
  const { platform } = manageDeps(c);
  if (registry.get(body.slug) || (await platform.getStore(body.slug))) throw slugTaken(body.slug);
  await refuseTakenDomain(registry, platform, body.domain, body.slug);
}

export const createStore = defineManageRoute({
  method: "POST",
  path: "/stores",
  summary: "Create a store (default order statuses and settings unless given).",
  body: createStoreBody,
  response: storeOut,
  errors: ["slug_taken", "domain_taken", "service_unavailable"],
  create(c, { body }, keep) {
    const now = c.get("deps").now();
    // One create at a time: two requests for one slug must not both build its file.
    return changeStores(c, () => provision(c, body, now, keep));
  },
});
