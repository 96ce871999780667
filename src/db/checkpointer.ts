import { type ReportError, reportToStderr } from "../log";
import { runtime } from "../runtime/runtime";
import type { CheckpointFile, CheckpointMessage } from "./checkpoint-worker";

/** A WAL past this size is emptied by a checkpoint that briefly holds writers. */
const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

/** `STOREAPI_TEST_WAL_LIMIT` (bytes) lets a test reach the limit quickly; not an operator setting. */
export function walLimitBytes(): number {
  const fromEnv = Number(process.env.STOREAPI_TEST_WAL_LIMIT);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : WAL_LIMIT_BYTES;
}

/**
 * Runs WAL checkpoints on a Worker thread (src/db/checkpoint-worker.ts). A checkpoint
 * copies every page written since the last one and then fsyncs the database file; on the
 * request thread that blocked the event loop for tens of milliseconds under steady writes
 * and made the write p99. In the compiled binary the worker is a second entry point of
 * the build (scripts/build.ts); the runtime edge finds it.
 */
export class Checkpointer {
  private worker: Worker | null;
  private failed = false;

  private constructor(worker: Worker, reportError: ReportError) {
    this.worker = worker;
    worker.addEventListener("error", (event) => {
      reportError(
        "checkpoint worker failed; checkpoints fall back to the request thread",
        event.message,
      );
      this.failed = true;
      this.worker = null;
    });
    worker.addEventListener(
      "message",
      (event: MessageEvent<{ type: string; path?: string; message?: string }>) => {
        if (event.data.type === "error")
          reportError(`checkpoint of ${event.data.path} failed`, event.data.message);
      },
    );
  }

  /** A running checkpointer, or null where Workers cannot be started (the caller checkpoints itself). */
  static start(reportError: ReportError = reportToStderr): Checkpointer | null {
    // Diagnostic switch for the bench's A/B of where checkpoints run; not an operator setting.
    if (process.env.STOREAPI_CHECKPOINTS === "inline") return null;
    try {
      return new Checkpointer(runtime().startWorker("db/checkpoint-worker.ts"), reportError);
    } catch (error) {
      reportError("checkpoint worker not started", error);
      return null;
    }
  }

  get alive(): boolean {
    return this.worker !== null && !this.failed;
  }

  private send(message: CheckpointMessage): void {
    this.worker?.postMessage(message);
  }

  checkpoint(files: CheckpointFile[]): void {
    if (files.length) this.send({ type: "checkpoint", files });
  }

  /** Closes the worker's connection to a database the pool has closed. */
  forget(path: string): void {
    this.send({ type: "forget", path });
  }

  /** Closes the worker's connections, then the worker (at most ~2 s). */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = null;
    const stopped = new Promise<void>((resolve) => {
      worker.addEventListener("message", (event: MessageEvent<{ type: string }>) => {
        if (event.data.type === "stopped") resolve();
      });
    });
    worker.postMessage({ type: "stop" } satisfies CheckpointMessage);
    await Promise.race([stopped, runtime().sleep(2000)]);
    worker.terminate();
  }
}
