/**
 * The mail worker's schedule: which stores have mail due, and from when. A store enters
 * when it is told about (`notify`) or found with queued mail, and leaves when a delivery
 * finds nothing more queued.
 */
export class DueStores {
  private readonly dueAt = new Map<string, number>();
  /** Stores notified while a delivery of theirs was under way: look again at once. */
  private readonly renotified = new Set<string>();

  /** A store has (or may have) new mail: due now, and again after a delivery under way. */
  notify(slug: string): void {
    this.dueAt.set(slug, 0);
    this.renotified.add(slug);
  }

  /** Due at `at`, unless due sooner already (the start-up scan's finding). */
  dueBy(slug: string, at: number): void {
    this.dueAt.set(slug, Math.min(at, this.dueAt.get(slug) ?? at));
  }

  /** Look again at `at` (its outbox could not be read or written). */
  retryAt(slug: string, at: number): void {
    this.dueAt.set(slug, at);
  }

  /** The stores with something due by `now`. */
  due(now: number): string[] {
    return [...this.dueAt].filter(([, at]) => at <= now).map(([slug]) => slug);
  }

  has(slug: string): boolean {
    return this.dueAt.has(slug);
  }

  /** A delivery of the store begins: a notification from now on asks for another look. */
  deliveryStarts(slug: string): void {
    this.renotified.delete(slug);
  }

  /** A delivery ended: next due at `next`, or out when nothing is queued (unless notified meanwhile). */
  deliveryEnded(slug: string, next: number | null): void {
    if (this.renotified.has(slug)) this.dueAt.set(slug, 0);
    else if (next === null) this.dueAt.delete(slug);
    else this.dueAt.set(slug, next);
  }

  /** The store is gone: its database is no longer served. */
  forget(slug: string): void {
    this.dueAt.delete(slug);
  }
}
