type Fetch<C> = (request: Request, connection: C) => Response | Promise<Response>;

/**
 * Counts the requests whose handler is still running. A client that hangs up does not stop
 * its handler, and the runtime's graceful stop no longer waits for it: a server closing its
 * databases then would fail the handler half-way (an error logged, a write rolled back).
 */
export class RequestsInFlight {
  private running = 0;
  private onIdle: (() => void)[] = [];

  get count(): number {
    return this.running;
  }

  /** `fetch`, counted while its answer is being made. */
  track<C>(fetch: Fetch<C>): Fetch<C> {
    return (request, connection) => {
      this.running++;
      let answer: Response | Promise<Response>;
      try {
        answer = fetch(request, connection);
      } catch (error) {
        this.done();
        throw error;
      }
      if (!(answer instanceof Promise)) {
        this.done();
        return answer;
      }
      return answer.finally(() => this.done());
    };
  }

  /** Resolves once no request is running (at once when none is). */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.onIdle.push(resolve));
  }

  private done(): void {
    this.running--;
    if (this.running > 0) return;
    const waiting = this.onIdle;
    this.onIdle = [];
    for (const resolve of waiting) resolve();
  }
}
