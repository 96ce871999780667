/**
 * The embedded replicas' thread: makes, syncs and removes each open store's replica
 * (src/db/replica.ts sends the requests). libsql reaches sqld from a replica's constructor
 * and blocks until it answers, so a libSQL server that stops answering stalls this thread,
 * never the request thread, which gives up on a request after its deadline. Reads never
 * come here: the request thread reads a replica's file through its own connection.
 */
import { rmSync } from "node:fs";
import Database from "libsql";
import { libsqlNative } from "./libsql-native";

declare const self: Worker;

/** What the request thread asks of the replica at `path`. */
export type ReplicaCall = { path: string } & (
  | { type: "open"; syncUrl: string; authToken: string | null }
  | { type: "sync" }
  | { type: "close" }
);

/** A call as posted: numbered, so that its reply finds it. */
export type ReplicaRequest = ReplicaCall & { id: number };

/** `error` is null when the request was done. */
export interface ReplicaReply {
  id: number;
  error: string | null;
}

/** The files libsql keeps for a replica at `path`. */
const REPLICA_FILES = ["", "-wal", "-shm", "-info", "-client_wal_index"];

/**
 * A closed replica's handle keeps its files open until collected: a collection every so
 * many closes. (Replicas run only under Bun: Deno's fetch cannot reach a namespace.)
 */
const CLOSES_PER_COLLECTION = 64;
const collectGarbage = () => (globalThis as { Bun?: { gc(force: boolean): void } }).Bun?.gc(true);

const replicas = new Map<string, InstanceType<typeof Database>>();
/** Each replica's requests, one after another (a close never lands in the middle of a sync). */
const queues = new Map<string, Promise<void>>();
let native: ReturnType<typeof libsqlNative> | undefined;
let closes = 0;

function remove(path: string): void {
  const replica = replicas.get(path);
  replicas.delete(path);
  if (replica) {
    replica.close();
    if (++closes % CLOSES_PER_COLLECTION === 0) collectGarbage();
  }
  for (const suffix of REPLICA_FILES) rmSync(path + suffix, { force: true });
}

/**
 * While sqld compacts a database's replication log into a snapshot (after enough writes),
 * a replica asking for the frames meanwhile is told the snapshot is "not found" until it
 * is written: that answer is tried again, for up to `SNAPSHOT_WAIT_MS`.
 */
const SNAPSHOT_WAIT_MS = 3_000;
const SNAPSHOT_RETRY_MS = 50;
const isSnapshotPending = (error: unknown) =>
  String((error as Error)?.message ?? error).includes("snapshot not found");

async function sync(replica: InstanceType<typeof Database>): Promise<void> {
  // The binding's own sync() blocks the thread; its native call is a promise.
  native ??= libsqlNative();
  const giveUpAt = performance.now() + SNAPSHOT_WAIT_MS;
  for (;;) {
    try {
      await native.databaseSyncAsync.call((replica as unknown as { db: unknown }).db);
      return;
    } catch (error) {
      if (!isSnapshotPending(error) || performance.now() > giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, SNAPSHOT_RETRY_MS));
    }
  }
}

async function handle(request: ReplicaRequest): Promise<void> {
  if (request.type === "open") {
    remove(request.path); // a replica lives only while its store is open: always a fresh copy
    const options = {
      syncUrl: request.syncUrl,
      authToken: request.authToken ?? undefined,
      readYourWrites: false,
    };
    const replica = new Database(
      request.path,
      options as ConstructorParameters<typeof Database>[1],
    );
    replicas.set(request.path, replica);
  } else if (request.type === "sync") {
    const replica = replicas.get(request.path);
    if (!replica) throw new Error("the replica is not open");
    await sync(replica);
  } else {
    remove(request.path);
  }
}

self.onmessage = (event: MessageEvent<ReplicaRequest>) => {
  const request = event.data;
  const done = (queues.get(request.path) ?? Promise.resolve()).then(() => handle(request));
  const queued = done.then(
    () => postMessage({ id: request.id, error: null } satisfies ReplicaReply),
    (error) =>
      postMessage({
        id: request.id,
        error: String(error?.message ?? error),
      } satisfies ReplicaReply),
  );
  queues.set(request.path, queued);
  queued.then(() => {
    if (queues.get(request.path) === queued) queues.delete(request.path);
  });
};
