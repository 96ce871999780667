import type { Store } from "../db/platform";
import type { StorePool } from "../db/pool";
import { type ApiKey, loadUsableKeys } from "./repository";
import { digestSecret } from "./secret";

interface StoreKeys {
  version: number;
  byDigest: Map<string, ApiKey>;
}

/**
 * Each store's usable keys, by digest, in memory. A store's entry is reloaded when its
 * `keysVersion` in the registry moves (the CLI, the management API and the admin screen
 * bump it), so a request never reads the
 * database just to learn whether keys changed.
 */
export class KeyCache {
  private stores = new Map<string, StoreKeys>();
  private loading = new Map<string, Promise<StoreKeys>>();
  /** How many times each store's keys were forgotten: a load begun before that is not kept. */
  private forgotten = new Map<string, number>();

  constructor(private readonly pool: StorePool) {}

  async find(store: Store, secret: string): Promise<ApiKey | undefined> {
    // Always by digest: a presented secret is never compared with a stored one (the
    // contract's rule), not even as a map key; SHA-256 costs ~2% of a point read.
    const digest = digestSecret(secret);
    let keys = this.stores.get(store.slug);
    if (!keys || keys.version !== store.keysVersion) keys = await this.load(store);
    return keys.byDigest.get(digest);
  }

  /** Drops a store's keys, and what a load under way brings: the next request reads them. */
  forget(slug: string): void {
    this.stores.delete(slug);
    this.forgotten.set(slug, (this.forgotten.get(slug) ?? 0) + 1);
  }

  private load(store: Store): Promise<StoreKeys> {
    const generation = this.forgotten.get(store.slug) ?? 0;
    const key = `${store.slug}@${store.keysVersion}#${generation}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.pool
        .use(store.slug, (db) => loadUsableKeys(db))
        .then((list) => {
          const entry = {
            version: store.keysVersion,
            byDigest: new Map(list.map((k) => [k.digest, k])),
          };
          // A slower load of an older version must not replace a newer one.
          const current = this.stores.get(store.slug);
          const forgotten = generation !== (this.forgotten.get(store.slug) ?? 0);
          if (!forgotten && (!current || current.version <= entry.version))
            this.stores.set(store.slug, entry);
          return entry;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }
}
