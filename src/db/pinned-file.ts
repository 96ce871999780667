import { fileIdOf } from "../file-system";
import {
  type Args,
  DatabaseUnavailable,
  type Db,
  fileNamed,
  type Queryable,
  type Row,
  type Statement,
} from "./driver";

/**
 * A database file's connection that refuses writes once its path names another file or
 * none (platform.db removed, or a copy moved over it, under a running server): SQLite would
 * go on writing into the file it opened, and everything acknowledged since would be gone
 * at the next start. Reads go on from the file opened. Used for platform.db, whose writes
 * are few (a store's, many, are watched every 2 s instead: src/db/store-file-watch.ts).
 */
export class PinnedFileDb implements Db {
  /** The file opened (device and inode). */
  readonly fileId: string | null;

  constructor(
    /** What the checkpoint schedule works on (it hands native files to its thread). */
    readonly inner: Db,
    readonly path: string,
  ) {
    this.fileId = fileIdOf(path);
  }

  /** What the path names now: the file opened, none, or another. */
  fileNow(): "same" | "missing" | "replaced" {
    const now = fileIdOf(this.path);
    if (now === this.fileId) return "same";
    return now === null ? "missing" : "replaced";
  }

  /** Throws `DatabaseUnavailable` when the path no longer names the file opened. */
  requireSameFile(): void {
    if (this.fileNow() !== "same")
      throw new DatabaseUnavailable(
        `${this.path} was removed or replaced while this process had it open; restart the server to use the file there now`,
      );
  }

  all<T = Row>(sql: string, args?: Args) {
    return this.named(this.inner.all<T>(sql, args));
  }
  get<T = Row>(sql: string, args?: Args) {
    return this.named(this.inner.get<T>(sql, args));
  }
  async run(sql: string, args?: Args) {
    this.requireSameFile();
    return this.named(this.inner.run(sql, args));
  }
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    this.requireSameFile();
    return this.named(
      this.inner.transaction(async (tx) => {
        const result = await fn(tx);
        this.requireSameFile(); // just before the commit: a throw here rolls it back
        return result;
      }),
    );
  }
  async batch(statements: Statement[]) {
    this.requireSameFile();
    return this.named(this.inner.batch(statements));
  }
  async exec(sql: string) {
    this.requireSameFile();
    return this.named(this.inner.exec(sql));
  }

  /** Damage, or a refused write, met after the file opened, named as at open: commands print the file. */
  private named<T>(work: Promise<T>): Promise<T> {
    return work.catch((error) => {
      throw fileNamed(this.path, error);
    });
  }

  checkpoint() {
    return this.inner.checkpoint();
  }
  walSize() {
    return this.inner.walSize();
  }
  truncateWal(waitMs?: number) {
    return this.inner.truncateWal(waitMs);
  }
  close(checkpoint?: boolean) {
    return this.inner.close(checkpoint);
  }
}
