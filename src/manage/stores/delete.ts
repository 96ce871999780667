import { existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { BUSY_TIMEOUT_MS } from "../../db/driver";
import { FileLocation, storeDbPath } from "../../db/location";
import type { AppContext } from "../../http/context";
import { ok } from "../../http/respond";
import { changeStores, manageDeps, reloadRegistry, storeOr404 } from "../context";
import { defineManageRoute } from "../define";
import { storeJsonEvenUnusable, unlessUnusable } from "./json";
import { slugParams, storeOut } from "./schema";

const fileSize = (path: string) => statSync(path, { throwIfNoEntry: false })?.size ?? 0;

/** `20991231T235959Z`: when the store was deleted, in its archived file's name. */
export const archiveStamp = (now: number) =>
  new Date(now)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");

/**
 * Stops serving the store at once (unregistered, registry reloaded), then moves its
 * checkpointed database to DIR/deleted/{slug}-{stamp}.db with no -wal or -shm beside it.
 * A WAL that still holds anything once the store is closed goes beside the archive: the
 * database could not be checkpointed (missing, damaged), another process was reading it
 * (SQLite checkpoints only up to the oldest reader, and reports that in a row, not an
 * error), or a request held through the delete wrote after the checkpoint.
 * On a libSQL server its namespace stays as it is, unregistered: the archive, until a
 * store with the same slug is created over it.
 */
async function archive(c: AppContext, slug: string): Promise<void> {
  const { pool, now } = c.get("deps");
  const { location } = pool;
  if (location instanceof FileLocation)
    await unlessUnusable(
      pool.use(slug, (db) => db.truncateWal(BUSY_TIMEOUT_MS)),
      () => {},
    );
  await manageDeps(c).platform.removeStore(slug);
  await reloadRegistry(c);
  if (!(location instanceof FileLocation)) return pool.closeStore(slug);
  await pool.closeStore(slug, () => {
    const path = storeDbPath(location.dataDir, slug);
    const deletedDir = join(location.dataDir, "deleted");
    mkdirSync(deletedDir, { recursive: true });
    const archived = archivePath(deletedDir, slug, archiveStamp(now()));
    if (existsSync(path)) renameSync(path, archived);
    if (fileSize(`${path}-wal`) > 0) renameSync(`${path}-wal`, `${archived}-wal`);
    for (const suffix of ["-wal", "-shm"]) rmSync(path + suffix, { force: true });
  });
}

/**
 * `{slug}-{stamp}.db`, or `{slug}-{stamp}-2.db` and on when a store of that slug was
 * already archived in the same second (created and deleted again): a rename would
 * replace that archive. Deletes run one at a time, so the name stays free until used.
 */
function archivePath(deletedDir: string, slug: string, stamp: string): string {
  let path = join(deletedDir, `${slug}-${stamp}.db`);
  for (let n = 2; existsSync(path); n++) path = join(deletedDir, `${slug}-${stamp}-${n}.db`);
  return path;
}

export const deleteStore = defineManageRoute({
  method: "DELETE",
  path: "/stores/:slug",
  summary: "Delete a store: it stops being served and its database is moved to DIR/deleted/.",
  params: slugParams,
  response: storeOut,
  errors: ["service_unavailable"],
  handler: async (c, { params }) => {
    // A store whose database cannot be read shows no order statuses: it can still be deleted.
    const store = storeOr404(c, params.slug);
    const before = await storeJsonEvenUnusable(c, store);
    await changeStores(c, async () => {
      storeOr404(c, params.slug); // a concurrent delete may have won
      await archive(c, params.slug);
    });
    return ok(c, before);
  },
});
