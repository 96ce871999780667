import { fileNamed, isStorageFailure, StoreArriving } from "./db/driver";

export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Where log lines go: stdout, or in tests a stand-in. `write` is false once it holds more than it has passed on. */
export interface LogOutput {
  write(chunk: string): boolean;
  once(event: "drain", listener: () => void): unknown;
  /** Resolves once what was written has gone out, where writes finish later. */
  settled?(): Promise<void>;
}

/**
 * Most log text held while stdout is not being read (a stalled pipe to a log shipper):
 * past it lines are dropped, counted, and the count is logged once stdout drains.
 */
export const MAX_HELD_LOG_BYTES = 8 * 1024 * 1024;

/**
 * JSON lines on stdout. Request lines are buffered and written once per tick, so a
 * busy server does not make one write call per request. While stdout is not read, what
 * waits is bounded: Bun would hold every line written to a full pipe (540,000 request
 * lines grew a server by 150 MB with its reader stopped).
 */
export class Logger {
  private buffer: string[] = [];
  private heldBytes = 0;
  private dropped = 0;
  private scheduled = false;
  private waitingForDrain = false;

  constructor(
    readonly level: LogLevel = "info",
    private readonly out: LogOutput = process.stdout,
  ) {}

  enabled(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(this.level) && this.level !== "silent";
  }

  write(level: LogLevel, entry: Record<string, unknown>): void {
    if (!this.enabled(level)) return;
    this.hold(JSON.stringify({ level, ...entry }));
    if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(() => this.flush(), 0);
    }
  }

  info(msg: string, fields: Record<string, unknown> = {}): void {
    this.write("info", { time: new Date().toISOString(), msg, ...fields });
  }

  /** An info line written whatever the level (the address a server chose for port 0). */
  always(msg: string, fields: Record<string, unknown> = {}): void {
    this.hold(JSON.stringify({ level: "info", time: new Date().toISOString(), msg, ...fields }));
    this.flush();
  }

  warn(msg: string, fields: Record<string, unknown> = {}): void {
    this.write("warn", { time: new Date().toISOString(), msg, ...fields });
  }

  error(msg: string, fields: Record<string, unknown> = {}): void {
    this.write("error", { time: new Date().toISOString(), msg, ...fields });
  }

  flush(): void {
    this.scheduled = false;
    if (this.waitingForDrain) return; // written when stdout has taken what it holds
    if (this.dropped > 0) {
      const count = this.dropped;
      this.dropped = 0;
      this.buffer.push(
        JSON.stringify({
          level: "warn",
          time: new Date().toISOString(),
          msg: "log lines dropped: stdout was not read",
          count,
        }),
      );
    }
    if (this.buffer.length === 0) return;
    const chunk = `${this.buffer.join("\n")}\n`;
    this.buffer = [];
    this.heldBytes = 0;
    if (this.out.write(chunk)) return;
    this.waitingForDrain = true;
    this.out.once("drain", () => {
      this.waitingForDrain = false;
      this.flush();
    });
  }

  /** Writes what waits, and resolves once it has gone out (before the process exits). */
  settled(): Promise<void> {
    this.flush();
    return this.out.settled?.() ?? Promise.resolve();
  }

  private hold(line: string): void {
    if (this.heldBytes + line.length > MAX_HELD_LOG_BYTES) {
      this.dropped++;
      return;
    }
    this.buffer.push(line);
    this.heldBytes += line.length + 1;
  }
}

/** Where background work reports a failure it cannot answer to anyone: the server's log. */
export type ReportError = (message: string, error: unknown) => void;

/** For code run outside a server (CLI, tests): stderr. */
export const reportToStderr: ReportError = (message, error) =>
  console.error(`${message}: ${error instanceof Error ? error.message : String(error)}`);

/** An error as a log field: message and stack for operators, never sent to clients. */
export const errorFields = (error: unknown) =>
  error instanceof Error ? { error: error.message, stack: error.stack } : { error: String(error) };

/** While storage fails, at most one "request failed" line per failure per this long. */
export const STORAGE_FAILURE_LOG_MS = 10_000;

/** Distinct storage failures followed apart at once; past this they share one line. */
const FOLLOWED_FAILURES = 100;

/** Runs `fn` in `ms` without keeping the process alive for it. */
const unrefTimeout = (ms: number, fn: () => void) => {
  const timer = setTimeout(fn, ms) as { unref?: () => void };
  timer.unref?.();
};

const STORAGE_FAILED = "request failed: storage out of reach, full or damaged";

/**
 * The "request failed" line for a request that answered 5xx. While storage is out of
 * reach or full every request fails alike, and a line per request would flood the log:
 * each failure (its message: the server, or the damaged store's file) is written once per
 * `STORAGE_FAILURE_LOG_MS`, and the ones left out meanwhile (each still has its request
 * line, status 503) are counted in one line when that time is up, so one damaged store
 * never hides another and an outage's count is never lost. Such lines carry no stack
 * (the failure is the storage's, not the program's). Other failures, as they come, with
 * their stacks; none for a store `load` has yet to move into place.
 */
export function requestFailureLog(
  logger: Pick<Logger, "error">,
  now: () => number = Date.now,
  storeName: (slug: string) => string = (slug) => `store ${slug}`,
  later: (ms: number, fn: () => void) => void = unrefTimeout,
) {
  type Window = { lastAt: number; leftOut: number };
  const windows = new Map<string, Window>();
  const countLeftOut = (key: string, window: Window | undefined) => {
    if (!window || window.leftOut === 0) return;
    logger.error(`${STORAGE_FAILED} (left out of the log)`, {
      sameFailuresNotLogged: window.leftOut,
      error: key,
    });
    window.leftOut = 0;
  };
  return (requestId: string, failure: unknown, store: string | null = null): void => {
    // Damage a statement met after the open: SQLite's words do not say which file.
    const error = store ? fileNamed(storeName(store), failure) : failure;
    // A store a load is still moving in: a second's 503, nothing to mend.
    if (error instanceof StoreArriving) return;
    if (!isStorageFailure(error)) {
      logger.error("request failed", { requestId, ...errorFields(error) });
      return;
    }
    const at = now();
    const message = String((error as Error | null)?.message ?? error);
    const key = followedAs(windows, message, at);
    const window = windows.get(key);
    if (window && at - window.lastAt < STORAGE_FAILURE_LOG_MS) {
      if (window.leftOut++ === 0)
        later(window.lastAt + STORAGE_FAILURE_LOG_MS - at, () => countLeftOut(key, window));
      return;
    }
    countLeftOut(key, window);
    logger.error(STORAGE_FAILED, { requestId, error: message });
    windows.set(key, { lastAt: at, leftOut: 0 });
  };
}

/** The failure's own key, or (past `FOLLOWED_FAILURES` live ones) a shared one. */
function followedAs(windows: Map<string, { lastAt: number }>, message: string, at: number): string {
  if (windows.has(message) || windows.size < FOLLOWED_FAILURES) return message;
  for (const [key, { lastAt }] of windows)
    if (at - lastAt >= STORAGE_FAILURE_LOG_MS) windows.delete(key);
  return windows.size < FOLLOWED_FAILURES ? message : "(other storage failures)";
}
