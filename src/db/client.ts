import { statSync } from "node:fs";
import {
  type Client,
  type Config,
  createClient,
  type InStatement,
  LibsqlError,
  type ResultSet,
  type Transaction,
} from "@libsql/client";
import { runtime } from "../runtime/runtime";
import {
  type Args,
  BUSY_TIMEOUT_MS,
  DatabaseUnavailable,
  type Db,
  databaseClosed,
  isLocked,
  isStorageFailure,
  Mutex,
  NamespaceNotServed,
  NOT_SERVED_HINT,
  type Queryable,
  type Row,
  type RunResult,
  type Statement,
} from "./driver";

type Executor = Pick<Client, "execute"> | Pick<Transaction, "execute">;

/**
 * What a failed call to the server means: `DatabaseUnavailable` when no answer came (the
 * fetch's own failure, which the stream reports first as itself and then as the cause of
 * "stream closed"; a deadline hit while reading the body; an HTTP error status from the
 * server or a proxy), else the error as it came (SQLite's own, e.g. a constraint).
 */
function unavailableOrSelf(error: unknown): unknown {
  if (error instanceof LibsqlError && /HTTP status 404\b/.test(error.message))
    return new NamespaceNotServed(
      `the libSQL server does not serve this database's namespace (HTTP 404): ${NOT_SERVED_HINT}`,
      { cause: error },
    );
  if (error instanceof LibsqlError && /HTTP status 40[13]\b/.test(error.message))
    return new DatabaseUnavailable(
      `the libSQL server refused the auth token (${/40[13]/.exec(error.message)?.[0]}): give the one it takes with --libsql-auth-token or STOREAPI_LIBSQL_AUTH_TOKEN`,
      { cause: error },
    );
  if (error instanceof LibsqlError && error.code === "SERVER_ERROR")
    return new DatabaseUnavailable(`the libSQL server answered: ${error.message}`, {
      cause: error,
    });
  if (error instanceof LibsqlError && error.code === "CLIENT_CLOSED") return databaseClosed(error);
  if ((error as Error)?.name === "TimeoutError")
    return new DatabaseUnavailable("the libSQL server did not answer in time", { cause: error });
  for (let cause = error; cause instanceof Error; cause = cause.cause)
    if (cause instanceof DatabaseUnavailable) return cause;
  return error;
}

/** Whether a failure is a call the server left unanswered past its deadline (not a refusal). */
function wentUnanswered(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause)
    if (cause.name === "TimeoutError") return true;
  return false;
}

/** `call`, its failures as `unavailableOrSelf` says. */
async function reaching<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    throw unavailableOrSelf(error);
  }
}

const toRunResult = (result: ResultSet): RunResult => ({
  changes: result.rowsAffected,
  lastInsertRowid: Number(result.lastInsertRowid ?? 0),
});

/** The most waiting batches one group commit takes (the rest go in the next). */
const GROUP_COMMIT_LIMIT = 64;

/** A `Db.batch` call waiting for the writer. */
interface WaitingBatch {
  statements: Statement[];
  resolve(results: RunResult[]): void;
  reject(error: unknown): void;
  /** When it began to wait (`performance.now()`). */
  queuedAt: number;
}

/** A write that waited while the one before it went unanswered (see `ClientDb.asWriter`). */
const leftUnansweredBefore = () =>
  new DatabaseUnavailable("the libSQL server did not answer the writes before it");

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
      return toRunResult(await execute(sql, args));
    },
  };
}

/** Any libSQL URL through @libsql/client (remote servers, or `file:` when asked for). */
export class ClientDb implements Db {
  private client: Client;
  private queries: Queryable;
  private writes = new Mutex();
  /** When a write last went unanswered (`performance.now()`): the writes waiting then give up. */
  private unansweredAt = Number.NEGATIVE_INFINITY;
  private waitingBatches: WaitingBatch[] = [];
  /** Whether a group commit is queued for the writer (it takes whatever waits when it runs). */
  private groupCommitQueued = false;
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
    return this.asWriter(() => this.queries.run(sql, args));
  }

  /**
   * Runs `work` as the one writer. A write that waited while the writer before it went
   * unanswered gives up at once (503): each would otherwise wait out a deadline of its own
   * in turn, and a stalled server answered the last of them after 16, 24 s.
   */
  private asWriter<T>(work: () => Promise<T>): Promise<T> {
    const queuedAt = performance.now();
    return this.writes.run(async () => {
      if (this.unansweredAt > queuedAt) throw leftUnansweredBefore();
      try {
        return await work();
      } catch (error) {
        this.noteIfUnanswered(error);
        // On a file, a statement refused as busy stays active on its connection until it is
        // collected (the client never resets it), and a later COMMIT there fails with "SQL
        // statements in progress": collected now, the connection is whole again.
        if (this.isFile && isLocked(error)) runtime().collectGarbage();
        throw error;
      }
    });
  }

  private noteIfUnanswered(error: unknown): void {
    if (wentUnanswered(error)) this.unansweredAt = performance.now();
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.asWriter(async () => {
      const tx = await reaching(this.client.transaction("write"));
      try {
        const result = await fn(adapt(tx));
        await reaching(tx.commit());
        return result;
      } catch (error) {
        // A server that left a call unanswered would leave the rollback so too, for another
        // deadline; closing the stream below ends the transaction there all the same.
        if (!wentUnanswered(error)) await tx.rollback().catch(() => {});
        throw error;
      } finally {
        tx.close();
      }
    });
  }

  batch(statements: Statement[]): Promise<RunResult[]> {
    const { promise, resolve, reject } = Promise.withResolvers<RunResult[]>();
    this.waitingBatches.push({ statements, resolve, reject, queuedAt: performance.now() });
    if (!this.groupCommitQueued) this.queueGroupCommit();
    return promise;
  }

  private queueGroupCommit(): void {
    this.groupCommitQueued = true;
    void this.writes.run(() => this.commitWaitingBatches());
  }

  /**
   * Group commit: the batches waiting when the writer is free, in one transaction and one
   * round trip. When one batch's statement fails (a constraint, say), SQLite rolls back
   * the others with it, so each is then run alone and only that one fails.
   */
  private async commitWaitingBatches(): Promise<void> {
    const taken = this.waitingBatches.splice(0, GROUP_COMMIT_LIMIT);
    this.groupCommitQueued = false;
    if (this.waitingBatches.length > 0) this.queueGroupCommit();
    // As `asWriter`: those that waited while the writer before them went unanswered give up.
    const group = taken.filter((waiting) => {
      if (this.unansweredAt <= waiting.queuedAt) return true;
      waiting.reject(leftUnansweredBefore());
      return false;
    });
    if (group.length === 0) return;
    try {
      const results = await this.runBatch(group.flatMap((waiting) => waiting.statements));
      let first = 0;
      for (const waiting of group) {
        waiting.resolve(results.slice(first, first + waiting.statements.length));
        first += waiting.statements.length;
      }
    } catch (error) {
      this.noteIfUnanswered(error);
      if (group.length === 1 || isStorageFailure(error)) {
        for (const waiting of group) waiting.reject(error);
        return;
      }
      for (const waiting of group)
        await this.runBatch(waiting.statements).then(waiting.resolve, waiting.reject);
    }
  }

  private async runBatch(statements: Statement[]): Promise<RunResult[]> {
    const sent = statements.map(({ sql, args = [] }) => ({ sql, args }) as InStatement);
    return (await reaching(this.client.batch(sent, "write"))).map(toRunResult);
  }

  async exec(sql: string): Promise<void> {
    await this.asWriter(() => reaching(this.client.executeMultiple(sql)));
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
