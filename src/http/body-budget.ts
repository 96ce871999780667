import { ApiError } from "../errors";

/**
 * The bytes of request bodies being read at once, over every connection. Each body is
 * bounded (1 MiB), but a client that sends 1 MiB less one byte on each of hundreds of
 * connections held that much memory each until the 10 s cut: 450 batches took a server
 * from 100 to 605 MB. Past this budget a body is refused (503, `Retry-After: 1`) before it
 * is read; one body always fits, whatever its size.
 */
export const BODY_BUDGET_BYTES = 256 * 1024 * 1024;
/**
 * The share of it one key may hold: a key sending slow bodies would otherwise take the
 * whole budget and have every store's writes refused.
 */
export const BODY_SHARE_BYTES = 16 * 1024 * 1024;

const busy = (message: string) =>
  new ApiError("service_unavailable", message, {}, { "Retry-After": "1" });

export class BodyBudget {
  private inUse = 0;
  private readonly byHolder = new Map<string, number>();

  constructor(
    private size: number,
    private share: number,
  ) {}

  /**
   * Reserves `bytes` for a body `holder` (a key) is sending, until the returned function
   * gives them back; a 503 when the budget, or the holder's share of it, has no room.
   */
  take(bytes: number, holder: string): () => void {
    const held = this.byHolder.get(holder) ?? 0;
    if (held > 0 && held + bytes > this.share)
      throw busy("This key is sending too many request bodies at once; retry in a moment.");
    const release = this.tryTake(bytes, holder);
    if (!release)
      throw busy("The server is receiving too many request bodies at once; retry in a moment.");
    return release;
  }

  /** `take` without the holder's share and without a 503: null when the budget has no room. */
  tryTake(bytes: number, holder: string): (() => void) | null {
    const held = this.byHolder.get(holder) ?? 0;
    if (this.inUse > 0 && this.inUse + bytes > this.size) return null;
    this.inUse += bytes;
    this.byHolder.set(holder, held + bytes);
    return () => {
      this.inUse -= bytes;
      const left = (this.byHolder.get(holder) ?? bytes) - bytes;
      if (left > 0) this.byHolder.set(holder, left);
      else this.byHolder.delete(holder);
    };
  }

  get bytesInUse(): number {
    return this.inUse;
  }

  /** For tests: a budget and a share small enough to reach. */
  resize(size: number, share: number): void {
    this.size = size;
    this.share = share;
  }
}

/** The process's one budget: memory is the process's, whichever server reads the body. */
export const bodiesInFlight = new BodyBudget(BODY_BUDGET_BYTES, BODY_SHARE_BYTES);
