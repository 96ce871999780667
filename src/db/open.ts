import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ClientDb } from "./client";
import type { Db } from "./driver";
import { type Migration, migrate, SchemaTooNewError } from "./migrate";
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
  let db: Db;
  if (url.startsWith("file:")) {
    const path = url.slice("file:".length);
    mkdirSync(dirname(path), { recursive: true });
    db = driver === "client" ? await new ClientDb(url).init() : new NativeDb(path);
  } else {
    db = await new ClientDb(url).init();
  }
  try {
    await migrate(db, migrations);
  } catch (error) {
    await db.close();
    if (error instanceof SchemaTooNewError && url.startsWith("file:"))
      error.message = `${url.slice(5)}: ${error.message}`;
    throw error;
  }
  return db;
}
