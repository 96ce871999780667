import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { writeStore } from "../../db/platform";
import { storeDbPath } from "../../db/pool";
import { ApiError } from "../../errors";
import { moveIntoPlace } from "../../db/staging";
import { buildStoreDb, validateFixture } from "../../load/load";
import type { AppContext } from "../../http/context";
import { idempotentAcross } from "../../http/idempotency";
import { manageDeps, reloadRegistry } from "../context";
import { defineManageRoute } from "../define";
import { storeJson } from "./json";
import { checkDomainFree, createStoreBody, domainTaken, storeOut } from "./schema";
import type * as v from "valibot";

type NewStoreBody = v.InferOutput<typeof createStoreBody>;

const slugTaken = (slug: string) =>
  new ApiError("slug_taken", `A store with slug "${slug}" already exists; choose another slug.`, { field: "slug" });

/**
 * All or nothing across a crash: the store's database is built in a temporary file and
 * renamed into place, and only then registered in platform.db. A crash before the
 * registration leaves an unregistered file, which the next create of that slug replaces.
 */
async function provision(c: AppContext, body: NewStoreBody, now: number): Promise<void> {
  const { registry, pool } = c.get("deps");
  const { platform } = manageDeps(c);
  if (registry.get(body.slug) || (await platform.getStore(body.slug))) throw slugTaken(body.slug);
  checkDomainFree(registry, body.domain, body.slug);
  if (await platform.domainTaken(body.domain)) throw domainTaken(body.domain); // the CLI may have added it a moment ago
  // The loader's rules and code build the file (operations.md fixture format); the body
  // already passed the same rules, so this cannot refuse it.
  const [valid] = validateFixture({ stores: [body] }, { now, platformDomain: registry.platformDomain });
  const finalPath = storeDbPath(pool.dataDir, body.slug);
  mkdirSync(join(pool.dataDir, "stores"), { recursive: true });
  const tempPath = `${finalPath}.creating`;
  await buildStoreDb(tempPath, valid, {}, now);
  // A leftover file may still be open here (the mail worker or key usage touched it): a
  // connection to the replaced file would keep reading the old one.
  await pool.closeStore(body.slug);
  moveIntoPlace(tempPath, finalPath);
  await writeStore(platform.db, valid.store, now);
  await reloadRegistry(c);
}

export const createStore = defineManageRoute({
  method: "POST",
  path: "/stores",
  summary: "Create a store (default order statuses and settings unless given).",
  body: createStoreBody,
  response: storeOut,
  errors: ["slug_taken", "domain_taken"],
  idempotent: true,
  handler: (c, { body }) =>
    idempotentAcross(c, async () => {
      const now = c.get("deps").now();
      // One create at a time: two requests for one slug must not both build its file.
      await manageDeps(c).storeFiles.run("stores", () => provision(c, body, now));
      const store = c.get("deps").registry.get(body.slug);
      if (!store) throw new Error(`store ${body.slug} vanished right after it was created`);
      return { status: 201, data: await storeJson(c, store) };
    }),
});
