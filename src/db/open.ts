import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ClientDb } from "./client";
import {
  DamagedDatabase,
  type Db,
  InaccessibleDatabase,
  isDamaged,
  isInaccessible,
  SchemaTooNewError,
} from "./driver";
import { type Migration, migrate } from "./migrate";
import { NativeDb } from "./native";

export type DriverName = "native" | "client";

/** `STOREAPI_DRIVER=client` forces @libsql/client even for local files (CI runs the suite both ways). */
export function driverFromEnv(): DriverName {
  return process.env.STOREAPI_DRIVER === "client" ? "client" : "native";
}

/** Opens a database by libSQL URL and brings its schema up to date. */
export async function openDb(
  url: string,
  migrations: Migration[],
  driver = driverFromEnv(),
): Promise<Db> {
  let db: Db | undefined;
  try {
    db = await connect(url, driver);
    await migrate(db, migrations);
    return db;
  } catch (error) {
    await db?.close().catch(() => {});
    if (!url.startsWith("file:")) throw error;
    const path = url.slice("file:".length);
    if (error instanceof SchemaTooNewError) error.message = `${path}: ${error.message}`;
    if (isDamaged(error)) throw new DamagedDatabase(path, error);
    throw isInaccessible(error) ? new InaccessibleDatabase(path, error) : error;
  }
}

async function connect(url: string, driver: DriverName): Promise<Db> {
  if (!url.startsWith("file:")) return new ClientDb(url).init();
  const path = url.slice("file:".length);
  mkdirSync(dirname(path), { recursive: true });
  return driver === "client" ? new ClientDb(url).init() : new NativeDb(path);
}
