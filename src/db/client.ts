import { statSync } from "node:fs";
import {
  type Client,
  type Config,
  createClient,
  type InStatement,
  LibsqlError,
  type Transaction,
} from "@libsql/client";
import {
  type Args,
  BUSY_TIMEOUT_MS,
  DatabaseUnavailable,
  type Db,
  Mutex,
  type Queryable,
  type Row,
  type RunResult,
} from "./driver";

type Executor = Pick<Client, "execute"> | Pick<Transaction, "execute">;

/**
 * What a failed call to the server means: `DatabaseUnavailable` when no answer came (the
 * fetch's own failure, which the stream reports first as itself and then as the cause of
 * "stream closed"; a deadline hit while reading the body; an HTTP error status from the
 * server or a proxy), else the error as it came (SQLite's own, e.g. a constraint).
 */
function unavailableOrSelf(error: unknown): unknown {
  if (error instanceof LibsqlError && error.code === "SERVER_ERROR")
    return new DatabaseUnavailable(`the libSQL server answered: ${error.message}`, {
      cause: error,
    });
  if ((error as Error)?.name === "TimeoutError")
    return new DatabaseUnavailable("the libSQL server did not answer in time", { cause: error });
  for (let cause = error; cause instanceof Error; cause = cause.cause)
    if (cause instanceof DatabaseUnavailable) return cause;
  return error;
}

/** `call`, its failures as `unavailableOrSelf` says. */
async function reaching<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    throw unavailableOrSelf(error);
  }
}

function adapt(executor: Executor): Queryable {
  const execute = (sql: string, args: Args = []) =>
    reaching(executor.execute({ sql, args } as InStatement));
  return {
    async all<T = Row>(sql: string, args?: Args) {
      const result = await execute(sql, args);
      return result.rows.map((row) => ({ ...row })) as T[];
    },
    async get<T = Row>(sql: string, args?: Args) {
      const result = await execute(sql, args);
      const row = result.rows[0];
      return (row ? { ...row } : undefined) as T | undefined;
    },
    async run(sql: string, args?: Args): Promise<RunResult> {
      const result = await execute(sql, args);
      return { changes: result.rowsAffected, lastInsertRowid: Number(result.lastInsertRowid ?? 0) };
    },
  };
}

/** Any libSQL URL through @libsql/client (remote servers, or `file:` when asked for). */
export class ClientDb implements Db {
  private client: Client;
  private queries: Queryable;
  private writes = new Mutex();
  private isFile: boolean;
  private readonly walPath: string | null;

  /** `options`: what else @libsql/client needs to reach a server (auth token, a namespace's `fetch`). */
  constructor(url: string, options: Omit<Config, "url" | "intMode"> = {}) {
    this.isFile = url.startsWith("file:");
    // On a file the client keeps a pool of connections and opens new ones as it goes (one
    // after each transaction): only this option gives every one of them the busy timeout.
    const timeout = this.isFile ? BUSY_TIMEOUT_MS : undefined;
    this.client = createClient({ ...options, url, intMode: "number", timeout });
    this.queries = adapt(this.client);
    this.walPath = this.isFile ? `${url.slice("file:".length)}-wal` : null;
  }

  async init(): Promise<this> {
    if (this.isFile) {
      await this.client.execute("PRAGMA journal_mode = WAL");
      await this.client.execute("PRAGMA synchronous = NORMAL");
    }
    return this;
  }

  all<T = Row>(sql: string, args?: Args) {
    return this.queries.all<T>(sql, args);
  }
  get<T = Row>(sql: string, args?: Args) {
    return this.queries.get<T>(sql, args);
  }
  run(sql: string, args?: Args) {
    return this.writes.run(() => this.queries.run(sql, args));
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.writes.run(async () => {
      const tx = await reaching(this.client.transaction("write"));
      try {
        const result = await fn(adapt(tx));
        await reaching(tx.commit());
        return result;
      } catch (error) {
        await tx.rollback().catch(() => {});
        throw error;
      } finally {
        tx.close();
      }
    });
  }

  async exec(sql: string): Promise<void> {
    await this.writes.run(() => reaching(this.client.executeMultiple(sql)));
  }

  async checkpoint(): Promise<void> {
    if (!this.isFile) return;
    await this.writes.run(() => this.client.execute("PRAGMA wal_checkpoint(PASSIVE)"));
  }

  walSize(): number {
    if (!this.walPath) return 0;
    try {
      return statSync(this.walPath).size;
    } catch {
      return 0;
    }
  }

  async truncateWal(): Promise<void> {
    if (!this.isFile) return;
    await this.writes.run(() => this.client.execute("PRAGMA wal_checkpoint(TRUNCATE)"));
  }

  async close(checkpoint = true): Promise<void> {
    await this.writes.run(async () => {
      if (this.isFile && checkpoint)
        await this.client.execute("PRAGMA wal_checkpoint(TRUNCATE)").catch(() => {});
      this.client.close();
    });
  }
}
