import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { runtime } from "../runtime/runtime";
import { ClientDb } from "./client";
import {
  BUSY_TIMEOUT_MS,
  DamagedDatabase,
  DatabaseUnavailable,
  type Db,
  InaccessibleDatabase,
  isDamaged,
  isInaccessible,
  isLocked,
  SchemaTooNewError,
} from "./driver";
import { type Migration, migrate } from "./migrate";
import { LOCK_RETRY_MS, NativeDb } from "./native";

export type DriverName = "native" | "client";

/** `STOREAPI_DRIVER=client` forces @libsql/client even for local files (CI runs the suite both ways). */
export function driverFromEnv(): DriverName {
  return process.env.STOREAPI_DRIVER === "client" ? "client" : "native";
}

/**
 * Opens a database by libSQL URL and brings its schema up to date. A file another process
 * holds locked is tried again, the event loop free between tries, for up to
 * `BUSY_TIMEOUT_MS`.
 */
export async function openDb(
  url: string,
  migrations: Migration[],
  driver = driverFromEnv(),
): Promise<Db> {
  const giveUpAt = performance.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      return await openOnce(url, migrations, driver);
    } catch (error) {
      if (!url.startsWith("file:")) throw error;
      if (!isLocked(error) || performance.now() >= giveUpAt)
        throw named(url.slice("file:".length), error);
    }
    await runtime().sleep(LOCK_RETRY_MS);
  }
}

async function openOnce(url: string, migrations: Migration[], driver: DriverName): Promise<Db> {
  let db: Db | undefined;
  try {
    db = await connect(url, driver);
    await migrate(db, migrations);
    return db;
  } catch (error) {
    await db?.close().catch(() => {});
    throw error;
  }
}

/** What opening the file `path` failed with, naming it. */
function named(path: string, error: unknown): unknown {
  if (error instanceof SchemaTooNewError) error.message = `${path}: ${error.message}`;
  if (isDamaged(error)) return new DamagedDatabase(path, error);
  if (isLocked(error))
    return new DatabaseUnavailable(`${path} is locked by another process`, { cause: error });
  return isInaccessible(error) ? new InaccessibleDatabase(path, error) : error;
}

async function connect(url: string, driver: DriverName): Promise<Db> {
  if (!url.startsWith("file:")) return new ClientDb(url).init();
  const path = url.slice("file:".length);
  mkdirSync(dirname(path), { recursive: true });
  return driver === "client" ? new ClientDb(url).init() : new NativeDb(path);
}

/** Store databases a command closes between two full collections. */
const CLOSES_PER_COLLECTION = 64;

/**
 * For a command that opens store after store (load, backup): a closed connection's memory
 * and files go back only once its statements are garbage-collected (the `libsql` binding
 * has no finalize) and their finalizers have run, on a later turn of the event loop; a
 * command's loop gives neither a reason to happen, and 4,000 stores held 1 GB. Await it
 * after each close.
 */
export function collectingEvery(closes = CLOSES_PER_COLLECTION): () => Promise<void> {
  let count = 0;
  return async () => {
    if (++count % closes !== 0) return;
    runtime().collectGarbage();
    await runtime().sleep(0);
  };
}
