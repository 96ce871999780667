import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { removeIfThere } from "../file-system";
import { DataDirLock, LOAD_LOCK } from "./data-dir";
import type { Db, Queryable } from "./driver";
import { arrivingCopy, stagedStorePath, stagingDir, storeDbPath } from "./location";

/**
 * How `load` stays all or nothing across a crash: store files are built in
 * `DIR/loading/`; one platform transaction registers the stores and records their
 * pending move (`meta` row `pending_load`); the files are moved after the commit. Any
 * later open of the data directory finishes a committed move (roll forward) or deletes
 * an uncommitted staging directory (roll back).
 */
const PENDING_KEY = "pending_load";

/** An empty staging directory for a new load. */
export function freshStagingDir(dataDir: string): void {
  removeIfThere(stagingDir(dataDir));
  mkdirSync(stagingDir(dataDir), { recursive: true });
}

/** Inside the transaction that registers the stores: the files to move once it commits. */
export async function recordPendingMove(tx: Queryable, slugs: string[]): Promise<void> {
  await tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [
    PENDING_KEY,
    JSON.stringify(slugs),
  ]);
}

/**
 * Moves a built store file into place as a NEW inode. The binding may keep this
 * process's connection to the built file alive after close, and SQLite shares WAL
 * locking state per inode within a process: renaming that inode into place would tie a
 * server in this process to the built file's deleted -shm, so it would no longer
 * coordinate with other processes (the CLI). A copy, renamed atomically, has no history.
 * Run again after a crash, it finishes the same move.
 */
export function moveIntoPlace(staged: string, final: string): void {
  const copy = arrivingCopy(final);
  // The staged file goes once its copy is whole, before the copy is moved into place: run
  // again after a crash, the move never copies the staged file over a store already in
  // place, which a server may have opened and written to since.
  if (existsSync(staged)) {
    copyFileSync(staged, copy);
    rmSync(staged, { force: true });
    crashPoint("copied-one");
  }
  if (!existsSync(copy)) return; // moved before a crash
  for (const suffix of ["-wal", "-shm"]) rmSync(final + suffix, { force: true });
  renameSync(copy, final);
}

let stopAt = process.env.STOREAPI_TEST_LOAD_STOP;

/**
 * Test hooks: `STOREAPI_TEST_LOAD_CRASH=step` kills this process at that step (a load's,
 * or a management store create's `store-registered`), as kill -9 would; `STOREAPI_TEST_LOAD_STOP=step` stops it (SIGSTOP) the first time it gets there,
 * for a test to act between two steps and then let it go on (SIGCONT).
 */
export function crashPoint(step: string): void {
  if (process.env.STOREAPI_TEST_LOAD_CRASH === step) process.kill(process.pid, "SIGKILL");
  if (stopAt === step) {
    stopAt = undefined;
    process.kill(process.pid, "SIGSTOP");
  }
}

/** Finishes or undoes whatever load left the staging directory behind; the caller holds the load lock. */
export async function settleStaging(dataDir: string, platform: Db): Promise<void> {
  const pending = await platform.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", [
    PENDING_KEY,
  ]);
  if (pending) {
    for (const slug of JSON.parse(pending.value) as string[]) {
      moveIntoPlace(stagedStorePath(dataDir, slug), storeDbPath(dataDir, slug));
      crashPoint("moved-one");
    }
    await platform.run("DELETE FROM meta WHERE key = ?", [PENDING_KEY]);
  }
  removeIfThere(stagingDir(dataDir));
}

/**
 * At every open of the data directory: settles a crashed load, unless a load is running
 * now. Whether there was one to settle.
 */
export async function settleCrashedLoad(dataDir: string, platform: Db): Promise<boolean> {
  if (!existsSync(stagingDir(dataDir))) return false;
  const lock = DataDirLock.tryAcquire(dataDir, LOAD_LOCK);
  if (!lock) return false; // a live load settles its own
  try {
    await settleStaging(dataDir, platform);
    return true;
  } finally {
    lock.release();
  }
}

/**
 * A running server settles a load that died beside it, every `intervalMs`: the load's
 * stores are registered but their files still staged, and they would answer 503 (and a
 * delete would archive nothing) until the next command or start. Returns the stop.
 */
export function settleCrashedLoadsEvery(
  dataDir: string,
  platform: Db,
  intervalMs: number,
  done: (settled: boolean, error?: unknown) => void,
): () => void {
  let settling = false;
  const timer = setInterval(() => {
    if (settling || !existsSync(stagingDir(dataDir))) return;
    settling = true;
    settleCrashedLoad(dataDir, platform)
      .then(done, (error) => done(false, error))
      .finally(() => {
        settling = false;
      });
  }, intervalMs);
  timer.unref?.();
  return () => clearInterval(timer);
}
