/**
 * The checkpoint thread: moves committed WAL frames into store database files with its
 * own connections, so the copy and its fsync never block the request thread.
 * Messages come from src/db/checkpointer.ts.
 */
import { existsSync } from "node:fs";
import Database from "libsql";

declare const self: Worker;

export type CheckpointMessage =
  | { type: "checkpoint"; paths: string[] }
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

function connection(path: string): InstanceType<typeof Database> | undefined {
  const open = connections.get(path);
  if (open) {
    connections.delete(path);
    connections.set(path, open);
    return open;
  }
  if (!existsSync(path)) return undefined; // the store was removed; never create a file
  const db = new Database(path);
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA wal_autocheckpoint = 0");
  connections.set(path, db);
  if (connections.size > MAX_OPEN) close(connections.keys().next().value as string);
  return db;
}

self.onmessage = (event: MessageEvent<CheckpointMessage>) => {
  const message = event.data;
  if (message.type === "checkpoint") {
    for (const path of message.paths) {
      try {
        // PASSIVE: copies what no reader still needs, never waits for readers or writers.
        connection(path)?.exec("PRAGMA wal_checkpoint(PASSIVE)");
      } catch (error) {
        postMessage({ type: "error", path, message: (error as Error).message });
      }
    }
  } else if (message.type === "forget") {
    close(message.path);
  } else if (message.type === "stop") {
    for (const path of [...connections.keys()]) close(path);
    postMessage({ type: "stopped" });
  }
};
