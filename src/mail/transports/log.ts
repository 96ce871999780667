import type { Logger } from "../../log";
import type { OutgoingMail, Transport } from "./transport";

/** No SMTP and no mail directory: each email becomes one JSON log line (headers only, never the body). */
export class LogTransport implements Transport {
  readonly name = "log";

  constructor(private readonly logger: Logger) {}

  async send(mail: OutgoingMail): Promise<void> {
    this.logger.info("email", {
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
