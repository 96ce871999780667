import type { StorePool } from "../db/pool";
import type { StoreRegistry } from "../registry";
import type { Logger } from "../log";

export interface MailWorkerOptions {
  pool: StorePool;
  registry: StoreRegistry;
  logger: Logger;
  smtp: string | null;
  mailDir: string | null;
  mailFrom: string;
}

/**
 * Delivers queued outbox rows in the background. (Placeholder: the mail issue
 * implements claiming, transports and retries behind this interface.)
 */
export class MailWorker {
  constructor(private readonly options: MailWorkerOptions) {}

  /** A store has (or may have) new mail queued. */
  notify(_slug: string): void {}

  start(): void {}

  /** Delivers what is due within `graceMs`, then stops. */
  async stop(_graceMs = 5000): Promise<void> {}
}
