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

  constructor(private readonly pool: StorePool) {}

  async find(store: Store, secret: string): Promise<ApiKey | undefined> {
    // Always by digest: a presented secret is never compared with a stored one (the
    // contract's rule), not even as a map key; SHA-256 costs ~2% of a point read.
    const digest = digestSecret(secret);
    let keys = this.stores.get(store.slug);
    if (!keys || keys.version !== store.keysVersion) keys = await this.load(store);
    return keys.byDigest.get(digest);
  }

  private load(store: Store): Promise<StoreKeys> {
    const key = `${store.slug}@${store.keysVersion}`;
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
          if (!current || current.version <= entry.version) this.stores.set(store.slug, entry);
          return entry;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }
}
