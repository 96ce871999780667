import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import MailComposer from "nodemailer/lib/mail-composer";
import { type OutgoingMail, type Transport, toMessage } from "./transport";

/**
 * `{store}-{outbox id}-{queued at, ms}.eml`: one file per outbox row, so a repeated delivery
 * replaces it. The time tells apart the rows of a store deleted (or replaced by `load
 * --replace`) and made again under the same slug, whose outbox ids start at 1 again.
 */
const emlFileName = (mail: OutgoingMail) => `${mail.store}-${mail.id}-${mail.date.getTime()}.eml`;
/** `.{eml name}.{12 hex}.tmp`, as `send` names them. */
const TEMP_FILE = /^\..+\.eml\.[0-9a-f]{12}\.tmp$/;

/**
 * `--mail-dir`: each email as an RFC 5322 file. Written to a hidden temporary name,
 * synced, then renamed, so a reader never sees half a message.
 */
export class DirTransport implements Transport {
  readonly name = "dir";

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.removeLeftovers();
  }

  /** Temporary files of a delivery cut short by a crash (kill -9): never renamed, never read. */
  private removeLeftovers(): void {
    for (const name of readdirSync(this.dir)) {
      if (TEMP_FILE.test(name)) rmSync(join(this.dir, name), { force: true });
    }
  }

  async send(mail: OutgoingMail): Promise<void> {
    const raw = await new MailComposer(toMessage(mail)).compile().build();
    const name = emlFileName(mail);
    const target = join(this.dir, name);
    const temp = join(this.dir, `.${name}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      const file = await open(temp, "wx", 0o600);
      try {
        await file.writeFile(raw);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => {});
      throw error;
    }
  }

  async close(): Promise<void> {}
}
