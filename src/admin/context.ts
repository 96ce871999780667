import type { Context } from "hono";
import type { AppDeps } from "../app";
import type { StorePool } from "../db/pool";
import type { CidrList } from "../http/cidr";
import type { Bindings, Variables } from "../http/context";
import type { KeyUsage } from "../keys/usage";
import type { StoreRegistry } from "../registry";
import type { FlashStore } from "./flash";
import type { WindowLimit } from "./limits";
import type { Session } from "./sessions";

export interface AdminDeps {
  registry: StoreRegistry;
  pool: StorePool;
  /** Where each key's last use is looked up. */
  usage: KeyUsage;
  allowHttp: boolean;
  trustProxy: CidrList | null;
  changeKeys: AppDeps["changeKeys"];
  beforeMailQueued: AppDeps["beforeMailQueued"];
  onMailQueued: (slug: string) => void;
  logError: (requestId: string, error: unknown, store: string | null) => void;
  now: () => number;
}

export type AdminEnv = {
  Bindings: Bindings;
  Variables: Variables & { session: Session; form: URLSearchParams };
};
export type AdminContext = Context<AdminEnv>;

/** What the screen's handlers share: its dependencies and its in-memory state. */
export interface AdminState {
  deps: AdminDeps;
  /** One-time notices between a POST and the page it redirects to. */
  flashes: FlashStore;
  /** Sign-in requests per store and per address. */
  perStore: WindowLimit;
  perIp: WindowLimit;
  /** Keys created on the screen per store: each is a row kept and an email to the owner. */
  keyCreates: WindowLimit;
}
