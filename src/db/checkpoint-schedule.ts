import type { ReportError } from "../log";
import type { CheckpointFile } from "./checkpoint-worker";
import { Checkpointer, walLimitBytes } from "./checkpointer";
import type { Db } from "./driver";
import { NativeDb } from "./native";
import { PinnedFileDb } from "./pinned-file";

/** A written WAL is folded in once it holds this much... */
const CHECKPOINT_WAL_BYTES = 1024 * 1024;
/** ...or once writes to it have paused this long. */
const CHECKPOINT_IDLE_MS = 2000;

const fileOf = (db: NativeDb): CheckpointFile => ({ path: db.path, fileId: db.fileId });

/**
 * Whether a written database's WAL should be folded in now. Not on every tick: with
 * 2,000 stores each written now and then, the checkpoint thread would open a connection
 * to each every second; a small WAL costs readers nothing.
 */
function checkpointDue(db: NativeDb, walBytes: number): boolean {
  if (!db.hasWrites) return false;
  return (
    walBytes >= CHECKPOINT_WAL_BYTES || performance.now() - db.lastWriteAt >= CHECKPOINT_IDLE_MS
  );
}

/**
 * Checkpoints, on a timer, every open database written since the last tick, keeping the
 * WAL bounded. Local files are checkpointed on a worker thread so the copy and its fsync
 * never stall requests; without the worker (or for remote databases) on this thread.
 */
export class CheckpointSchedule {
  private readonly timer: ReturnType<typeof setInterval>;

  private constructor(
    private checkpointer: Checkpointer | null,
    private readonly openDbs: () => Iterable<Promise<Db>>,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.checkpointWritten(), intervalMs);
    this.timer.unref?.();
  }

  static start(
    openDbs: () => Iterable<Promise<Db>>,
    intervalMs: number,
    reportError?: ReportError,
  ): CheckpointSchedule {
    return new CheckpointSchedule(Checkpointer.start(reportError), openDbs, intervalMs);
  }

  private async checkpointWritten(): Promise<void> {
    const settled = await Promise.allSettled(this.openDbs());
    const files: CheckpointFile[] = [];
    const walLimit = walLimitBytes();
    for (const result of settled) {
      if (result.status !== "fulfilled") continue;
      const db = result.value instanceof PinnedFileDb ? result.value.inner : result.value;
      // Under sustained writes passive checkpoints may never bring the WAL back to its
      // start, so it grows without bound; past the limit one checkpoint empties it.
      const walBytes = db.walSize();
      if (walBytes > walLimit) {
        db.truncateWal().catch(() => {});
        continue;
      }
      if (db instanceof NativeDb && this.checkpointer?.alive) {
        if (checkpointDue(db, walBytes) && db.takeWritten()) files.push(fileOf(db));
      } else {
        db.checkpoint().catch(() => {});
      }
    }
    this.checkpointer?.checkpoint(files);
  }

  /** Whether this schedule checkpoints `db` on its thread (else its close must do it). */
  handles(db: Db): boolean {
    return db instanceof NativeDb && Boolean(this.checkpointer?.alive);
  }

  /**
   * Before the pool closes a database: the thread closes its own connection to it, after
   * checkpointing what was written when the close itself does not (an eviction).
   */
  closing(db: Db, closeCheckpoints: boolean): void {
    if (!(db instanceof NativeDb) || !this.checkpointer) return;
    if (!closeCheckpoints && db.takeWritten()) this.checkpointer.checkpoint([fileOf(db)]);
    this.checkpointer.forget(db.path);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.checkpointer?.stop();
    this.checkpointer = null;
  }
}
