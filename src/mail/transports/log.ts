import type { Logger } from "../../log";
import type { OutgoingMail, Transport } from "./transport";

/**
 * No SMTP and no mail directory: each email becomes one JSON log line (headers only, never
 * the body), at every log level: the log is where it is delivered.
 */
export class LogTransport implements Transport {
  readonly name = "log";

  constructor(private readonly logger: Logger) {}

  async send(mail: OutgoingMail): Promise<void> {
    this.logger.always("email", {
      store: mail.store,
      outboxId: mail.id,
      kind: mail.kind,
      from: typeof mail.from === "string" ? mail.from : `${mail.from.name} <${mail.from.address}>`,
      to: mail.to,
      subject: mail.subject,
    });
  }

  async close(): Promise<void> {}
}
