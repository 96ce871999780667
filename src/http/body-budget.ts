import { ApiError } from "../errors";

/**
 * The bytes of request bodies being read at once, over every connection. Each body is
 * bounded (1 MiB), but a client that sends 1 MiB less one byte on each of hundreds of
 * connections held that much memory each until the 10 s cut: 450 batches took a server
 * from 100 to 605 MB. Past this budget a body is refused (503, `Retry-After: 1`) before it
 * is read; one body always fits, whatever its size.
 */
export const BODY_BUDGET_BYTES = 256 * 1024 * 1024;

export class BodyBudget {
  private inUse = 0;

  constructor(private size: number) {}

  /** Reserves `bytes` while a body is read; a 503 when the budget has no room for them. */
  take(bytes: number): void {
    if (this.inUse > 0 && this.inUse + bytes > this.size)
      throw new ApiError(
        "service_unavailable",
        "The server is receiving too many request bodies at once; retry in a moment.",
        {},
        { "Retry-After": "1" },
      );
    this.inUse += bytes;
  }

  give(bytes: number): void {
    this.inUse -= bytes;
  }

  get bytesInUse(): number {
    return this.inUse;
  }

  /** For tests: a budget small enough to reach. */
  resize(size: number): void {
    this.size = size;
  }
}

/** The process's one budget: memory is the process's, whichever server reads the body. */
export const bodiesInFlight = new BodyBudget(BODY_BUDGET_BYTES);
