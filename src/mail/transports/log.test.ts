import { expect, test } from "bun:test";
import { Logger } from "../../log";
import { LogTransport } from "./log";

// The log is where such an email goes: a level that hides info lines must not lose it.
test("without SMTP or a mail dir, an email is logged at every log level, with its text but no sign-in token", async () => {
  for (const level of ["debug", "info", "warn", "error", "silent"] as const) {
    const chunks: string[] = [];
    const logger = new Logger(level, { write: (chunk) => chunks.push(chunk) > 0, once: () => {} });
    await new LogTransport(logger).send({
      store: "shop1",
      id: 7,
      kind: "key_deleted",
      from: { name: "Shop", address: "no-reply@localhost" },
      replyTo: null,
      to: "owner@shop1.test",
      subject: "A key was deleted",
      text: "Open https://shop1.test/api/admin/sign-in?token=abc_DEF-123 to sign in.",
      html: "<p>body</p>",
      messageId: "<7@shop1>",
      date: new Date(0),
    });
    logger.flush();
    const lines = chunks
      .join("")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect([level, lines.map(({ time: _, ...line }) => line)]).toEqual([
      level,
      [
        {
          level: "info",
          msg: "email",
          store: "shop1",
          outboxId: 7,
          kind: "key_deleted",
          from: "Shop <no-reply@localhost>",
          to: "owner@shop1.test",
          subject: "A key was deleted",
          text: "Open https://shop1.test/api/admin/sign-in?token=… (not logged; storeapi admin-link makes a link) to sign in.",
        },
      ],
    ]);
  }
});
