import type { StorePool } from "./pool";

/** Stores checked between two turns of the event loop: a stat each, ~3.7 µs. */
const CHECKED_PER_TURN = 256;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Notices an open store's file removed or replaced under the server (an operator's `rm`,
 * or a backup moved over it): SQLite goes on writing into the file it opened, and all it
 * acknowledged since would be gone at the next start. Such a store is closed and answers
 * 503 until the server restarts (see `StorePool.retire`).
 */
export class StoreFileWatch {
  private timer: ReturnType<typeof setInterval> | undefined;
  private checking = false;

  constructor(
    private readonly pool: StorePool,
    /** Told each store closed this way. */
    private readonly onMoved: (slug: string) => void,
  ) {}

  start(intervalMs = 2000): void {
    if (!this.pool.location.storeFileId) return; // a libSQL server: no files to move
    this.timer = setInterval(() => {
      if (this.checking) return;
      this.checking = true;
      this.check().finally(() => {
        this.checking = false;
      });
    }, intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Closes every open store whose path no longer names the file it opened. */
  async check(): Promise<void> {
    const files = this.pool.openFiles();
    for (const [i, { slug, fileId }] of files.entries()) {
      if (i > 0 && i % CHECKED_PER_TURN === 0) await nextTurn();
      if (this.pool.location.storeFileId?.(slug) === fileId) continue;
      if (!this.pool.isOpenOn(slug, fileId)) continue; // closed or reopened meanwhile
      const file = this.pool.location.storeName(slug);
      await this.pool.retire(
        slug,
        `${file} was removed or replaced while the server had it open: stop the server, delete the ${file}-wal and -shm beside it, and start it again`,
      );
      this.onMoved(slug);
    }
  }
}
