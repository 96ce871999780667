import type { Context } from "hono";
import type { Db } from "../db/driver";
import type { Store } from "../db/platform";
import type { ApiKey } from "../keys/repository";
import type { Connection } from "../runtime/runtime";

/** What the serving edge tells the app about the connection (src/runtime, or a test). */
export type Bindings = Connection;

/**
 * Per-request values. Code on every request's path reads them with `c.get(name)`: Hono's
 * `c.var` builds a new object from all of them on each access.
 */
export interface Variables {
  requestId: string;
  /** The client's address, worked out on first use: only a failed or blocked key needs it. */
  clientIp: () => string;
  store: Store;
  db: Db;
  key: ApiKey;
}

export type AppEnv = { Bindings: Bindings; Variables: Variables };
export type AppContext = Context<AppEnv>;
