import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileIdOf, holdsData, removeDatabase } from "../file-system";
import { runtime } from "../runtime/runtime";
import { ClientDb } from "./client";
import {
  makeDirsPrivate,
  refuseLostRegistry,
  refuseUnfinishedBackup,
  withStoresLock,
} from "./data-dir";
import {
  DatabaseUnavailable,
  type Db,
  NamespaceNotServed,
  NOT_SERVED_HINT,
  namespaceName,
  REMOTE_DEADLINE_MS,
  StoreArriving,
  StoreDatabaseMissing,
} from "./driver";
import { type Migration, migrate } from "./migrate";
import { platformMigrations, storeMigrations } from "./migrations";
import { openDb } from "./open";
import { PinnedFileDb } from "./pinned-file";
import { ReplicaDb } from "./replica";

/**
 * Where the databases live: files under a data directory, or namespaces on a libSQL
 * server. The pool, the platform registry and the CLI ask it for databases instead of
 * building file paths, so every command works the same on either.
 */
export interface Location {
  /** For logs and messages: the data directory, or the libSQL server's URL. */
  readonly describe: string;
  readonly remote: boolean;
  /** Files an open store holds here, to size the pool from the open-files limit. */
  readonly descriptorsPerStore: number;
  /** The registry, created and migrated on first use. */
  openPlatform(): Promise<Db>;
  /** A store's database, brought up to date by `migrations`; on files it is created if missing. */
  openStore(slug: string, migrations?: Migration[]): Promise<Db>;
  /** Makes an empty store database (on a server, its namespace), replacing any leftover one. */
  createStore(slug: string): Promise<void>;
  deleteStore(slug: string): Promise<void>;
  storeExists(slug: string): Promise<boolean>;
  /** Of these stores, the ones without a database. */
  missingStores(slugs: string[]): Promise<string[]>;
  /** On files: which file the store's path names now (device and inode); null when none. */
  storeFileId?(slug: string): string | null;
  /** What a use of a registered store without a database throws. */
  storeMissing(slug: string): StoreDatabaseMissing;
  /** The store's database as an operator finds it: its file, or its namespace on the server. */
  storeName(slug: string): string;
  /** The registry's database as an operator finds it. */
  readonly platformName: string;
  /**
   * Runs `change` (a store's database made, moved or archived, and its registration) as the
   * only such change here, waiting up to `waitMs` for another process's (`waiting()` is
   * called once as it starts to wait); else `busy()` is thrown.
   */
  changeStores<T>(
    waitMs: number,
    busy: () => Error,
    change: () => Promise<T>,
    waiting?: () => void,
  ): Promise<T>;
}

/**
 * Descriptors an open store file holds, measured: one connection's three files (database,
 * WAL, shm), and now and then a second reader or the checkpoint thread's (8,088 open with
 * 2,000 stores open).
 */
export const DESCRIPTORS_PER_STORE = 4;

export const storeDbPath = (dataDir: string, slug: string) => join(dataDir, "stores", `${slug}.db`);
/** Where `load` builds store files before it registers them and moves them into place (see staging.ts). */
export const stagingDir = (dataDir: string) => join(dataDir, "loading");
export const stagedStorePath = (dataDir: string, slug: string) =>
  join(stagingDir(dataDir), `${slug}.db`);
/** The whole copy of a staged store file, beside its place, until it is renamed into it. */
export const arrivingCopy = (final: string) => `${final}.copy`;

/** `DIR/platform.db` and `DIR/stores/{slug}.db`. */
export class FileLocation implements Location {
  readonly remote = false;
  readonly descriptorsPerStore = DESCRIPTORS_PER_STORE;
  constructor(readonly dataDir: string) {}

  get describe() {
    return this.dataDir;
  }
  get platformName() {
    return join(this.dataDir, "platform.db");
  }
  async openPlatform() {
    refuseUnfinishedBackup(this.dataDir);
    refuseLostRegistry(this.dataDir);
    makeDirsPrivate(this.dataDir);
    const db = await openDb(`file:${this.platformName}`, platformMigrations);
    return new PinnedFileDb(db, this.platformName);
  }
  openStore(slug: string, migrations = storeMigrations) {
    return openDb(`file:${storeDbPath(this.dataDir, slug)}`, migrations);
  }
  async createStore(slug: string) {
    await this.deleteStore(slug);
    try {
      await (await this.openStore(slug)).close();
    } catch (error) {
      await this.deleteStore(slug); // what a full disk let it write
      throw error;
    }
  }
  async deleteStore(slug: string) {
    removeDatabase(storeDbPath(this.dataDir, slug));
  }
  /**
   * Whether the store has a database: a file that holds something. An empty file (a copy
   * cut short) would open as a new, empty store, and so would a `-wal` left without its
   * file, which SQLite would then fold into that new store and delete.
   */
  async storeExists(slug: string) {
    return holdsData(storeDbPath(this.dataDir, slug));
  }
  storeFileId(slug: string) {
    return fileIdOf(storeDbPath(this.dataDir, slug));
  }
  /** One read of the directory (a server with 10,000 stores asks at start). */
  async missingStores(slugs: string[]) {
    return this.checkStoreFiles(slugs).missing;
  }
  /**
   * From one read of `stores/`: the stores in `slugs` without a file (`missing`), and the
   * files no store in `slugs` is registered for (`stray`: what a create killed before it
   * registered the store leaves, or a delete killed before it archived the file).
   */
  checkStoreFiles(slugs: string[]): { missing: string[]; stray: string[] } {
    const dir = join(this.dataDir, "stores");
    const files = existsSync(dir) ? readdirSync(dir) : [];
    const present = new Set(files);
    const registered = new Set(slugs.map((slug) => `${slug}.db`));
    return {
      missing: slugs.filter((slug) => !present.has(`${slug}.db`)),
      stray: files
        .filter((name) => name.endsWith(".db") && !registered.has(name))
        .map((name) => join(dir, name)),
    };
  }
  storeName(slug: string) {
    return storeDbPath(this.dataDir, slug);
  }
  storeMissing(slug: string) {
    const path = this.storeName(slug);
    const staged = stagedStorePath(this.dataDir, slug);
    if (existsSync(staged) || existsSync(arrivingCopy(path)))
      return new StoreArriving(
        `${path} is not in place yet: a load registered store "${slug}" and moves its file in from ${staged} (a load that stopped meanwhile is finished by a running server, or by any storeapi command on ${this.dataDir})`,
      );
    const what = existsSync(path) ? "is empty" : "is missing";
    // A restored file would take a WAL left here for its own, and apply another file's pages.
    const leftover = existsSync(`${path}-wal`)
      ? ` (first delete the ${path}-wal and -shm left without it)`
      : "";
    return new StoreDatabaseMissing(
      `${path} ${what}: store "${slug}" is registered but has no database; restore the file from a backup${leftover}`,
    );
  }
  /** Across processes: the data directory's stores lock. */
  changeStores<T>(
    waitMs: number,
    busy: () => Error,
    change: () => Promise<T>,
    waiting?: () => void,
  ) {
    return withStoresLock(this.dataDir, waitMs, busy, change, waiting);
  }
}

export interface LibsqlServer {
  /** The server's Hrana/HTTP address: `http://…`, `https://…` or `libsql://…`. */
  url: string;
  /** Its admin API (namespaces are created and deleted there); needed to add or load stores. */
  adminUrl: string | null;
  authToken: string | null;
  /** sqld's `--admin-auth-key`, which its admin API takes as `Authorization: basic {key}`. */
  adminAuthKey?: string | null;
}

/** The `meta` row of the lease on changing stores: `{until epoch ms} {holder}`. */
const STORES_LEASE = "stores_lease";
/** Long enough for a create (a namespace made and filled) or a load's registration. */
const STORES_LEASE_MS = 60_000;
const LEASE_POLL_MS = 50;

/** Takes the lease when nobody holds it or its holder's time ran out; whether it did. */
async function takeStoresLease(platform: Db, holder: string): Promise<boolean> {
  const now = Date.now();
  const { changes } = await platform.run(
    `INSERT INTO meta (key, value) VALUES (?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value
     WHERE CAST(substr(meta.value, 1, instr(meta.value, ' ') - 1) AS INTEGER) < ?`,
    [STORES_LEASE, `${now + STORES_LEASE_MS} ${holder}`, now],
  );
  return changes === 1;
}

/** Files one store's replica holds open (see `LibsqlLocation.descriptorsPerStore`), rounded up. */
const REPLICA_DESCRIPTORS = 10;

export const PLATFORM_NAMESPACE = "platform";
/** A store's tables: a namespace with a row in any of them holds a store. */
const STORE_TABLES = ["order_statuses", "api_keys", "customers", "orders", "products", "leads"];
export const storeNamespace = (slug: string) => `store-${slug}`;

/**
 * A `fetch` for @libsql/client that reaches one namespace. sqld (`--enable-namespaces`)
 * takes the namespace from the first label of the Host header and the client has no
 * header option, so each request's Host becomes `{namespace}.{host of the URL}`: the TCP
 * connection still goes to the URL, and a proxy in front of sqld can route on the name.
 */
export function namespaceFetch(
  namespace: string,
  serverUrl: string,
): (request: Request) => Promise<Response> {
  const host = `${namespace}.${new URL(serverUrl).host}`;
  return async (request) => {
    const headers = new Headers(request.headers);
    headers.set("host", host);
    try {
      return await fetch(new Request(request, { headers, signal: deadline() }));
    } catch (error) {
      throw unanswered(serverUrl, error);
    }
  };
}

/** The signal that ends one request to a libSQL server unanswered (its body included). */
const deadline = () => AbortSignal.timeout(REMOTE_DEADLINE_MS);

/** Why a request got no answer, in our words (the runtime's ask "Is the computer able to access the url?"). */
function noAnswerReason(error: unknown): string {
  const { name, code, message } = (error ?? {}) as {
    name?: string;
    code?: string;
    message?: string;
  };
  if (name === "TimeoutError") return `no answer within ${REMOTE_DEADLINE_MS / 1000} s`;
  if (code === "ConnectionRefused" || code === "ECONNREFUSED" || /ECONNREFUSED/.test(message ?? ""))
    return "the connection was refused (is it running, on that address?)";
  // Bun's advice to its own programmers is no help to an operator.
  return String(message ?? error).replace(/\s*For more information, pass `verbose: true`.*$/s, "");
}

/**
 * A request to the libSQL server at `url` (its admin API when `what` says so) that failed
 * without an answer, as `DatabaseUnavailable`.
 */
function unanswered(url: string, error: unknown, what = "the libSQL server"): DatabaseUnavailable {
  return new DatabaseUnavailable(`${what} at ${url} did not answer: ${noAnswerReason(error)}`, {
    cause: error,
  });
}

/** An answer's text as one line of at most 200 characters (a proxy's error page is HTML). */
const oneLine = (text: string) => {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
};

/** Error from the libSQL admin API, with its own words. */
export class LibsqlAdminError extends Error {}

/** Namespaces `platform` and `store-{slug}` on a libSQL server started with `--enable-namespaces`. */
/** Why replicas cannot reach the server at `url` (an IP address: no `store-{slug}.` before it); null when they can. */
export function replicasUnreachable(url: string): string | null {
  const { hostname } = new URL(url);
  if (!/^[\d.]+$|^\[/.test(hostname)) return null;
  return `--libsql-replicas needs --libsql-url to name the server by a host name, not ${hostname}: each store's replica reaches it as store-{slug}.{host}`;
}

export class LibsqlLocation implements Location {
  readonly remote = true;
  /** Where `serve --libsql-replicas` keeps each open store's embedded replica; null: none. */
  private replicaDir: string | null = null;
  constructor(readonly server: LibsqlServer) {
    if (!runtime().fetchSetsHost) {
      throw new LibsqlAdminError(
        `--libsql-url needs the compiled storeapi: under ${runtime().version} fetch cannot choose sqld's namespace by the Host header`,
      );
    }
  }

  get describe() {
    return this.server.url;
  }

  /**
   * A store over HTTP holds no file (sockets are shared; counted as one); with a replica,
   * measured: the replica's connection (database ×4, WAL, shm, its frame index) and the
   * reader's three.
   */
  get descriptorsPerStore() {
    return this.replicaDir ? REPLICA_DESCRIPTORS : 1;
  }

  async openPlatform() {
    // Without the admin API (a serving node), the registry must already exist.
    if (this.server.adminUrl && !(await this.namespaceExists(PLATFORM_NAMESPACE)))
      await this.admin("POST", PLATFORM_NAMESPACE, "/create");
    return this.open(PLATFORM_NAMESPACE, platformMigrations);
  }
  openStore(slug: string, migrations = storeMigrations) {
    return this.open(storeNamespace(slug), migrations);
  }
  /**
   * Replaces a namespace left by this registry (a load that crashed before registering, a
   * store deleted through the management API) or one that holds no store, but refuses one
   * that holds a store another registry made: with `platform` lost and made again, every
   * store namespace looks unregistered, and replacing one would wipe that store.
   */
  async createStore(slug: string) {
    this.requireAdmin();
    const namespace = storeNamespace(slug);
    const registry = await this.registryName();
    if (await this.storeExists(slug)) {
      if (!(await this.replaceable(namespace, registry))) {
        throw new LibsqlAdminError(
          `namespace ${namespace} on ${this.describe} holds a store that this registry (namespace ${PLATFORM_NAMESPACE}) did not make: ` +
            `if ${PLATFORM_NAMESPACE} was lost or replaced, restore it from a backup; to drop that store's data instead, delete the namespace with the admin API (DELETE /v1/namespaces/${namespace})`,
        );
      }
      await this.admin("DELETE", namespace, "");
    }
    await this.admin("POST", namespace, "/create");
    const db = await this.openStore(slug);
    try {
      await db.run("INSERT INTO meta (key, value) VALUES ('registry', ?)", [registry]);
    } finally {
      await db.close();
    }
  }
  async deleteStore(slug: string) {
    if (await this.storeExists(slug)) await this.admin("DELETE", storeNamespace(slug), "");
  }
  /** Without the admin API (a serving node) there is no asking: a missing namespace fails on first use instead. */
  async storeExists(slug: string) {
    return this.server.adminUrl ? this.namespaceExists(storeNamespace(slug)) : true;
  }
  /** One admin request per store (none without the admin API). */
  async missingStores(slugs: string[]) {
    const missing: string[] = [];
    for (const slug of slugs) if (!(await this.storeExists(slug))) missing.push(slug);
    return missing;
  }
  storeName(slug: string) {
    return namespaceName(storeNamespace(slug), this.describe);
  }
  get platformName() {
    return namespaceName(PLATFORM_NAMESPACE, this.describe);
  }
  storeMissing(slug: string) {
    return new StoreDatabaseMissing(
      `store "${slug}" is registered but its namespace ${storeNamespace(slug)} is missing on ${this.describe}`,
    );
  }
  /**
   * Across the nodes and commands sharing this server: a lease in the registry's `meta`
   * (STORES_LEASE), taken by one statement and given back after `change`; a holder that
   * died frees it when the lease runs out.
   */
  async changeStores<T>(
    waitMs: number,
    busy: () => Error,
    change: () => Promise<T>,
    waiting?: () => void,
  ) {
    const platform = await this.open(PLATFORM_NAMESPACE, platformMigrations);
    try {
      const holder = randomUUID();
      for (let tries = 0, giveUpAt = Date.now() + waitMs; ; tries++) {
        if (await takeStoresLease(platform, holder)) break;
        if (tries === 0) waiting?.();
        if (Date.now() >= giveUpAt) throw busy();
        await runtime().sleep(LEASE_POLL_MS);
      }
      try {
        return await change();
      } finally {
        await platform.run(
          "DELETE FROM meta WHERE key = ? AND substr(value, instr(value, ' ') + 1) = ?",
          [STORES_LEASE, holder],
        );
      }
    } finally {
      await platform.close();
    }
  }

  /**
   * Reads of the store API from a local embedded replica of each open store, kept in `dir`
   * (emptied now: a replica lives only while its store is open). The binding's replica
   * takes only a URL, so each one reaches sqld as `{namespace}.{host}`: that name must
   * resolve to the server (a wildcard DNS record; `*.localhost` is loopback).
   */
  keepReplicasIn(dir: string): void {
    const unreachable = replicasUnreachable(this.server.url);
    if (unreachable) throw new LibsqlAdminError(unreachable);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.replicaDir = dir;
  }

  /** The URL an embedded replica of `namespace` syncs from (see `keepReplicasIn`). */
  private replicaUrl(namespace: string): string {
    const url = new URL(this.server.url);
    url.hostname = `${namespace}.${url.hostname}`;
    return url.toString().replace(/\/$/, "");
  }

  /** The name in this registry's `meta` (platform migration 6). */
  private async registryName(): Promise<string> {
    const platform = await this.open(PLATFORM_NAMESPACE, platformMigrations);
    try {
      const row = await platform.get<{ value: string }>(
        "SELECT value FROM meta WHERE key = 'registry'",
      );
      if (!row) throw new Error(`namespace ${PLATFORM_NAMESPACE} has no registry name`);
      return row.value;
    } finally {
      await platform.close();
    }
  }

  /** Whether `namespace` carries this registry's name, or holds no store's rows (read as it is, not migrated). */
  private async replaceable(namespace: string, registry: string): Promise<boolean> {
    const db = this.connect(namespace);
    const firstRow = async (sql: string) => {
      try {
        return await db.get<{ value?: string }>(sql);
      } catch (error) {
        if (/no such table/i.test(String((error as Error)?.message))) return undefined;
        throw error;
      }
    };
    try {
      const mark = await firstRow("SELECT value FROM meta WHERE key = 'registry'");
      if (mark) return mark.value === registry;
      for (const table of STORE_TABLES)
        if (await firstRow(`SELECT 1 AS value FROM ${table} LIMIT 1`)) return false;
      return true;
    } finally {
      await db.close();
    }
  }

  private connect(namespace: string): ClientDb {
    const { url, authToken } = this.server;
    return new ClientDb(url, {
      authToken: authToken ?? undefined,
      fetch: namespaceFetch(namespace, url),
    });
  }

  private async open(namespace: string, migrations: Migration[]): Promise<Db> {
    const { url, authToken } = this.server;
    const db = this.connect(namespace);
    try {
      await migrate(db, migrations);
    } catch (error) {
      await db.close().catch(() => {});
      if (error instanceof NamespaceNotServed) {
        if (this.server.adminUrl)
          throw new NamespaceNotServed(
            `the libSQL server at ${url} does not serve namespace ${namespace}, though its admin API at ${this.server.adminUrl} has it: ${NOT_SERVED_HINT}, or the two addresses name different servers`,
          );
        throw new LibsqlAdminError(
          `the libSQL server at ${url} has no namespace ${namespace}; a command given --libsql-admin-url creates it`,
        );
      }
      // Another HTTP service there (sqld's admin API, a proxy's error page) answers something else.
      const message = String((error as Error)?.message);
      if (/HRANA_PROTO_ERROR|Unexpected (token|end of JSON)|is not valid JSON/.test(message)) {
        throw new LibsqlAdminError(
          `${url} did not answer as a libSQL server's API (is --libsql-url the admin API's address, or something else's?)`,
        );
      }
      throw error;
    }
    if (!this.replicaDir || namespace === PLATFORM_NAMESPACE) return db;
    return new ReplicaDb(db, {
      syncUrl: this.replicaUrl(namespace),
      authToken,
      path: join(this.replicaDir, `${namespace}.db`),
    });
  }

  private async namespaceExists(namespace: string): Promise<boolean> {
    return (await this.admin("GET", namespace, "/config", [404])).status === 200;
  }

  private requireAdmin(): string {
    if (!this.server.adminUrl)
      throw new LibsqlAdminError(
        "--libsql-admin-url is needed to create or delete databases on the libSQL server",
      );
    return this.server.adminUrl;
  }

  /** One admin API call; any answer but 2xx (or an `allowed` status) is an error naming the server's reason. */
  private async admin(
    method: string,
    namespace: string,
    path: string,
    allowed: number[] = [],
  ): Promise<Response> {
    const adminUrl = this.requireAdmin();
    const { authToken, adminAuthKey } = this.server;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (adminAuthKey) headers.authorization = `basic ${adminAuthKey}`;
    else if (authToken) headers.authorization = `Bearer ${authToken}`;
    const target = `${adminUrl.replace(/\/+$/, "")}/v1/namespaces/${namespace}${path}`;
    let response: Response;
    try {
      response = await fetch(target, {
        method,
        headers,
        body: method === "POST" ? "{}" : undefined,
        signal: deadline(),
      });
    } catch (error) {
      throw unanswered(adminUrl, error, "the libSQL server's admin API");
    }
    if (!response.ok && !allowed.includes(response.status)) {
      const hint =
        response.status === 401
          ? " (its key: --libsql-admin-auth-key, sqld's --admin-auth-key)"
          : "";
      throw new LibsqlAdminError(
        `the libSQL admin API refused ${method} namespace ${namespace}: ${[response.status, oneLine(await response.text())].filter(Boolean).join(" ")}${hint}`,
      );
    }
    return response;
  }
}
