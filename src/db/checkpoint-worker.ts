/**
 * The checkpoint thread: moves committed WAL frames into store database files with its
 * own connections, so the copy and its fsync never block the request thread.
 * Messages come from src/db/checkpointer.ts.
 */
import Database from "libsql";
import { fileIdOf } from "../file-system";
import { isLocked } from "./driver";

declare const self: Worker;

/** A database to checkpoint: its path, and the file the server's connection has open there. */
export interface CheckpointFile {
  path: string;
  fileId: string | null;
}

export type CheckpointMessage =
  | { type: "checkpoint"; files: CheckpointFile[] }
  | { type: "forget"; path: string }
  | { type: "stop" };

/** Connections kept open between rounds (least recently used closed first). */
const MAX_OPEN = 64;
const connections = new Map<string, InstanceType<typeof Database>>();

function close(path: string): void {
  const db = connections.get(path);
  connections.delete(path);
  try {
    db?.close();
  } catch {
    // already closed
  }
}

function connection({ path, fileId }: CheckpointFile): InstanceType<typeof Database> | undefined {
  const open = connections.get(path);
  if (open) {
    connections.delete(path);
    connections.set(path, open);
    return open;
  }
  // Only the file the server has open: never create one where a store was removed, nor
  // open another moved over it (it would take the old file's WAL, which keeps the name).
  if (fileId === null || fileIdOf(path) !== fileId) return undefined;
  const db = new Database(path);
  try {
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA wal_autocheckpoint = 0");
  } catch (error) {
    // Left open, it would keep the server's close from being the last and folding the WAL in.
    db.close();
    throw error;
  }
  connections.set(path, db);
  if (connections.size > MAX_OPEN) close(connections.keys().next().value as string);
  return db;
}

self.onmessage = (event: MessageEvent<CheckpointMessage>) => {
  const message = event.data;
  if (message.type === "checkpoint") {
    for (const file of message.files) {
      try {
        // PASSIVE: copies what no reader still needs, never waits for readers or writers.
        connection(file)?.exec("PRAGMA wal_checkpoint(PASSIVE)");
      } catch (error) {
        // Busy: another connection is checkpointing it, most often the server's own closing
        // it after an eviction (its last connection folds the WAL in). The next one will do.
        if (isLocked(error)) continue;
        postMessage({ type: "error", path: file.path, message: (error as Error).message });
      }
    }
  } else if (message.type === "forget") {
    close(message.path);
  } else if (message.type === "stop") {
    for (const path of [...connections.keys()]) close(path);
    postMessage({ type: "stopped" });
  }
};
