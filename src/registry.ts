import type { Platform, Store } from "./db/platform";
import { type ReportError, reportToStderr } from "./log";

/**
 * The server's in-memory view of platform.db: which store a Host header reaches.
 * It re-reads the registry whenever another process (the CLI) commits to platform.db,
 * checked by a cheap `PRAGMA data_version` poll, so changes apply without a restart.
 */
export class StoreRegistry {
  private bySlug = new Map<string, Store>();
  private byDomain = new Map<string, Store>();
  private lastVersion = -1;
  private timer: ReturnType<typeof setInterval> | undefined;
  private listeners: Array<(previous: Store | undefined, next: Store) => void> = [];
  private reloadHooks: Array<() => Promise<void>> = [];
  private loading: Promise<void> = Promise.resolve();

  constructor(
    private readonly platform: Platform,
    readonly platformDomain: string,
    private readonly reportError: ReportError = reportToStderr,
  ) {}

  /**
   * Re-reads the registry. Loads run one after another: one that started before a write
   * (the poll) can never finish after, and overwrite, one started after it (the writer's).
   */
  load(): Promise<void> {
    const next = this.loading.then(() => this.read());
    this.loading = next.catch(() => {});
    return next;
  }

  private async read(): Promise<void> {
    this.lastVersion = await this.platform.dataVersion();
    const stores = await this.platform.listStores();
    const previous = this.bySlug;
    this.bySlug = new Map(stores.map((s) => [s.slug, s]));
    this.byDomain = new Map(stores.map((s) => [s.domain.toLowerCase(), s]));
    for (const store of stores) {
      for (const listener of this.listeners) listener(previous.get(store.slug), store);
    }
    for (const hook of this.reloadHooks) await hook();
  }

  /** Runs on every reload, i.e. whenever platform.db changed (e.g. to re-read the host keys). */
  onReload(hook: () => Promise<void>): void {
    this.reloadHooks.push(hook);
  }

  /** Called after each reload for every store, with its previous state (if any). */
  onStoreChange(listener: (previous: Store | undefined, next: Store) => void): void {
    this.listeners.push(listener);
  }

  async refreshIfChanged(): Promise<void> {
    if ((await this.platform.dataVersion()) !== this.lastVersion) await this.load();
  }

  /**
   * Polls `data_version` (one cheap pragma, no table read) so CLI changes apply within a
   * second. A failure is logged once, not at every poll, until a poll works again.
   */
  watch(intervalMs = 250): void {
    let running = false;
    let failing = false;
    this.timer = setInterval(() => {
      if (running) return; // a slow reload must not pile up behind itself
      running = true;
      this.refreshIfChanged()
        .then(
          () => {
            failing = false;
          },
          (error) => {
            if (!failing)
              this.reportError(
                "store registry refresh failed (logged again only after it works)",
                error,
              );
            failing = true;
          },
        )
        .finally(() => {
          running = false;
        });
    }, intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  get(slug: string): Store | undefined {
    return this.bySlug.get(slug);
  }

  all(): Store[] {
    return [...this.bySlug.values()];
  }

  /**
   * The store a Host header names: its own domain or `{slug}.{platformDomain}`; port ignored
   * (a port that is not digits makes the header name no store). `shop.example.com.` (the
   * fully qualified form, trailing dot) is the same name.
   */
  resolveHost(host: string | undefined | null): Store | undefined {
    const hostName = host ? withoutPort(host) : undefined;
    if (!hostName) return undefined;
    const name = hostName.toLowerCase().replace(/\.$/, "");
    const own = this.byDomain.get(name);
    if (own) return own;
    const suffix = `.${this.platformDomain.toLowerCase()}`;
    if (!name.endsWith(suffix)) return undefined;
    return this.bySlug.get(name.slice(0, -suffix.length));
  }
}

/** `host` of `host[:port]`, or undefined when the port is not digits (RFC 3986 `port`). */
function withoutPort(host: string): string | undefined {
  const nameEnd = host.startsWith("[") ? host.indexOf("]") + 1 : host.lastIndexOf(":");
  if (nameEnd === -1) return host;
  const port = host.slice(nameEnd);
  return nameEnd > 0 && /^(:\d*)?$/.test(port) ? host.slice(0, nameEnd) : undefined;
}
