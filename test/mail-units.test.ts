import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_RETRY, retryDelay } from "../src/mail/backoff";
import {
  customerApproved,
  keyCreated,
  keyDeleted,
  orderStatusChanged,
} from "../src/mail/templates";
import { DirTransport } from "../src/mail/transports/dir";
import { loginMayGoInClear, parseSmtpUrl, SmtpTransport } from "../src/mail/transports/smtp";
import {
  classifyFailure,
  describeFailure,
  type OutgoingMail,
} from "../src/mail/transports/transport";

import { eventually } from "./mail-support";

describe("templates", () => {
  test("the status email names the status, the order number and the tracking number", () => {
    const mail = orderStatusChanged({
      storeName: "Shop",
      customerName: "Dana",
      orderNumber: 1001,
      statusName: "נשלח",
      trackingNumber: "RR1IL",
    });
    expect(mail.kind).toBe("order_status");
    expect(mail.subject).toBe("Order #1001: נשלח");
    expect(mail.text).toBe(
      "Hello Dana,\n\nThe status of your order #1001 at Shop is now: נשלח.\n\nOrder: #1001\nStatus: נשלח\nTracking number: RR1IL\n\nShop\n",
    );
    expect(mail.html).toContain('<td dir="auto">RR1IL</td>');
    expect(mail.html).toContain('<meta charset="utf-8">');
  });

  test("no tracking number, no tracking line; an empty name gets a plain greeting", () => {
    const mail = orderStatusChanged({
      storeName: "Shop",
      customerName: "",
      orderNumber: 7,
      statusName: "Delivered",
      trackingNumber: null,
    });
    expect(mail.text).toBe(
      "Hello,\n\nThe status of your order #7 at Shop is now: Delivered.\n\nOrder: #7\nStatus: Delivered\n\nShop\n",
    );
    expect(mail.html).not.toContain("Tracking");
  });

  test("the approval email says the customer can log in", () => {
    const mail = customerApproved({ storeName: "חנות", firstName: "דנה" });
    expect(mail.kind).toBe("customer_approved");
    expect(mail.subject).toBe("Your חנות account is approved");
    expect(mail.text).toBe(
      "Hello דנה,\n\nYour account at חנות has been approved. You can now log in.\n\nחנות\n",
    );
  });

  test("key emails carry name, hint, permissions, who and when", () => {
    const notice = {
      storeName: "Shop",
      keyName: "ERP",
      hint: "svc_sk_…abcd",
      permissions: "orders:write",
      by: "api",
      at: "2025-01-01T10:00:00+02:00",
    };
    expect(keyCreated(notice).text).toBe(
      "An API key was created for Shop.\n\nName: ERP\nKey: svc_sk_…abcd\nPermissions: orders:write\nCreated by: api\nCreated at: 2025-01-01T10:00:00+02:00\n\n" +
        "If you did not expect this, delete the key (storeapi keys delete, or the API keys screen).\n",
    );
    const deleted = keyDeleted(notice);
    expect(deleted.subject).toBe('API key "ERP" deleted for Shop');
    expect(deleted.text).toContain("Deleted by: api\nDeleted at: 2025-01-01T10:00:00+02:00\n");
  });

  test("a name is one run of text: its line breaks cannot add a line, nor an override turn the text after it", () => {
    const mail = keyCreated({
      storeName: "Shop\u2028Bcc: x@evil.test",
      keyName: "k\r\nPermissions: none\u202e\u0007",
      hint: "svc_sk_…abcd",
      permissions: "orders:write",
      by: "api",
      at: "2025-01-01T10:00:00+02:00",
    });
    expect(mail.subject).toBe('API key "k  Permissions: none " created for Shop Bcc: x@evil.test');
    expect(mail.text.split("\n").slice(0, 4)).toEqual([
      "An API key was created for Shop Bcc: x@evil.test.",
      "",
      "Name: k  Permissions: none ",
      "Key: svc_sk_…abcd",
    ]);
  });

  test("HTML escapes every name", () => {
    const mail = customerApproved({ storeName: `<b>"Tom's"</b> & co`, firstName: "<script>" });
    expect(mail.html).toContain("&lt;script&gt;");
    expect(mail.html).toContain("&lt;b&gt;&quot;Tom&#39;s&quot;&lt;/b&gt; &amp; co");
    expect(mail.html).not.toContain("<script>");
  });
});

describe("backoff", () => {
  const policy = { ...DEFAULT_RETRY, baseDelayMs: 1000, maxDelayMs: 10_000 };

  test("doubles per attempt up to the cap, jitter between half and all of it", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelay(n, policy, () => 0.999999))).toEqual([
      1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(n, policy, () => 0))).toEqual([
      500, 1000, 2000, 4000, 5000,
    ]);
    expect(retryDelay(1000, policy, () => 0.5)).toBe(7500);
  });
});

describe("failure classes", () => {
  test("5xx is the message's fault; 4xx waits; connection, login and 421 mean the relay is down", () => {
    expect(
      classifyFailure(Object.assign(new Error("x"), { code: "EENVELOPE", responseCode: 550 })),
    ).toBe("rejected");
    expect(
      classifyFailure(Object.assign(new Error("x"), { code: "EMESSAGE", responseCode: 554 })),
    ).toBe("rejected");
    expect(
      classifyFailure(Object.assign(new Error("x"), { code: "EENVELOPE", responseCode: 452 })),
    ).toBe("deferred");
    expect(
      classifyFailure(Object.assign(new Error("x"), { code: "EAUTH", responseCode: 535 })),
    ).toBe("unavailable");
    expect(classifyFailure(Object.assign(new Error("x"), { responseCode: 421 }))).toBe(
      "unavailable",
    );
    expect(
      classifyFailure(Object.assign(new Error("connect ECONNREFUSED"), { code: "ESOCKET" })),
    ).toBe("unavailable");
    expect(classifyFailure(Object.assign(new Error("EACCES"), { code: "EACCES" }))).toBe(
      "unavailable",
    );
    expect(classifyFailure(undefined)).toBe("unavailable");
  });

  test("a 5xx to the greeting, EHLO or STARTTLS is the relay's state, not the message's fault", () => {
    const refused = (code: string, responseCode: number) =>
      classifyFailure(Object.assign(new Error("x"), { code, responseCode }));
    // nodemailer: STARTTLS answered 500 (a relay without it, `?starttls=required`).
    expect(refused("ETLS", 500)).toBe("unavailable");
    expect(refused("EPROTOCOL", 554)).toBe("unavailable"); // greeting or EHLO refused
    expect(refused("EENVELOPE", 421)).toBe("unavailable");
    expect(refused("EMESSAGE", 451)).toBe("deferred");
    // No reply at all: nodemailer refused the envelope or the message itself.
    expect(classifyFailure(Object.assign(new Error("x"), { code: "EMESSAGE" }))).toBe("rejected");
  });

  test("the stored reason is one bounded line", () => {
    expect(describeFailure(new Error("550 no\r\n  such user"))).toBe("550 no such user");
    expect(describeFailure(new Error("x".repeat(900))).length).toBe(500);
  });
});

describe("--smtp URLs", () => {
  test("smtp:// upgrades with STARTTLS when offered; smtps:// is TLS from the start", () => {
    expect(parseSmtpUrl("smtp://user:p%40ss@mail.example.com:2525")).toEqual({
      host: "mail.example.com",
      port: 2525,
      secure: false,
      auth: { user: "user", pass: "p@ss" },
    });
    expect(parseSmtpUrl("smtps://mail.example.com")).toEqual({
      host: "mail.example.com",
      port: 465,
      secure: true,
      auth: undefined,
    });
    expect(parseSmtpUrl("smtp://[::1]").port).toBe(587);
    expect(parseSmtpUrl("smtp://[::1]").host).toBe("::1");
  });

  test("query options: starttls=required|off, tls=insecure", () => {
    expect(parseSmtpUrl("smtp://h:25?starttls=required").requireTLS).toBe(true);
    expect(parseSmtpUrl("smtp://h:25?starttls=off").ignoreTLS).toBe(true);
    expect(parseSmtpUrl("smtps://h?tls=insecure").tls).toEqual({ rejectUnauthorized: false });
  });

  test("a login that may go in clear: smtp:// to another machine without starttls=required", () => {
    const cases = [
      ["smtp://u:p@relay.example.com", true],
      ["smtp://u:p@relay.example.com?starttls=off", true],
      ["smtp://u:p@relay.example.com?starttls=required", false],
      ["smtps://u:p@relay.example.com", false],
      ["smtp://relay.example.com", false],
      ["smtp://u:p@127.0.0.1:25", false],
      ["smtp://u:p@localhost", false],
      ["smtp://u:p@[::1]:25", false],
    ] as const;
    for (const [url, inClear] of cases)
      expect([url, loginMayGoInClear(url)]).toEqual([url, inClear]);
  });

  test("mistakes are explained", () => {
    expect(() => parseSmtpUrl("mail.example.com")).toThrow("--smtp must be a URL");
    expect(() => parseSmtpUrl("http://mail.example.com")).toThrow(
      "--smtp must start with smtp:// or smtps://",
    );
    expect(() => parseSmtpUrl("smtp://h?pool=true")).toThrow('--smtp: unknown option "pool=true"');
    expect(() => parseSmtpUrl("smtps://h?starttls=off")).toThrow(
      "starttls=off does not apply to smtps://",
    );
    expect(() => parseSmtpUrl("smtp://h/path")).toThrow("--smtp takes no path");
    // Both were taken: the last one won, the first silently (required over off, say).
    expect(() => parseSmtpUrl("smtp://h?starttls=required&starttls=off")).toThrow(
      '--smtp: "starttls" is given more than once; give it once',
    );
    expect(() => parseSmtpUrl("smtp://h:0")).toThrow("--smtp: port 0 is no relay's port");
    expect(() => parseSmtpUrl("smtp://h?starttls")).toThrow('--smtp: unknown option "starttls";');
    // A bad escape is named, the password it is in never quoted.
    const badPassword = () => parseSmtpUrl("smtp://u:%ZZsecret@h:25");
    expect(badPassword).toThrow("--smtp: the password has a bad %-escape; write % itself as %25");
    expect(() => parseSmtpUrl("smtp://%E0%A4%A:pw@h:25")).toThrow(
      "--smtp: the user name has a bad %-escape",
    );
  });
});

describe("--mail-dir files", () => {
  test("every line ends in CRLF, a CR or LF inside a name too (RFC 5322)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "storeapi-eml-"));
    try {
      const transport = new DirTransport(dir);
      await transport.send({
        store: "shop1",
        id: 1,
        kind: "customer_approved",
        from: { name: "Evil\r\nBcc: x@example.com", address: "no-reply@example.com" },
        replyTo: null,
        to: "dana@example.com",
        subject: "Welcome\r\nBcc: y@example.com",
        text: "Hello lone\rCR,\n\nSecond\r\nThird é\n",
        html: "<p>lone\rCR</p>\n<p>x</p>",
        messageId: "<1.shop1@example.com>",
        date: new Date(Date.UTC(2026, 0, 1)),
      });
      const [name] = readdirSync(dir);
      const raw = readFileSync(join(dir, name), "latin1");
      expect([raw.match(/(?<!\r)\n/g), raw.match(/\r(?!\n)/g)]).toEqual([null, null]);
      expect(raw).toContain("\r\n\r\nHello lone\r\nCR,\r\n\r\nSecond\r\nThird =C3=A9\r\n");
      // A line break in the store's name or the subject is a space, not a header of its own.
      expect(raw).toContain('\r\nFrom: "Evil Bcc: x@example.com" <no-reply@example.com>\r\n');
      expect(raw).toContain("\r\nSubject: Welcome Bcc: y@example.com\r\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a relay that trickles", () => {
  /**
   * A relay that takes the message, then answers its end with `250-` and a byte every
   * 100 ms, never ending the line (each byte resets a limit on silence). Its second
   * connection answers as a relay should.
   */
  function tricklingRelay() {
    let connections = 0;
    let closed = 0;
    const timers: Array<ReturnType<typeof setInterval>> = [];
    const server = Bun.listen<{ buffer: string; inData: boolean; trickles: boolean }>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(socket) {
          socket.data = { buffer: "", inData: false, trickles: ++connections === 1 };
          socket.write("220 relay.test ESMTP\r\n");
        },
        data(socket, chunk) {
          const state = socket.data;
          state.buffer += chunk.toString();
          for (;;) {
            if (state.inData) {
              const end = state.buffer.indexOf("\r\n.\r\n");
              if (end < 0) return;
              state.buffer = state.buffer.slice(end + 5);
              state.inData = false;
              if (!state.trickles) socket.write("250 taken\r\n");
              else {
                socket.write("250-");
                timers.push(setInterval(() => socket.write("-"), 100));
              }
              continue;
            }
            const eol = state.buffer.indexOf("\r\n");
            if (eol < 0) return;
            const line = state.buffer.slice(0, eol).toUpperCase();
            state.buffer = state.buffer.slice(eol + 2);
            if (line.startsWith("EHLO")) socket.write("250-relay.test\r\n250 8BITMIME\r\n");
            else if (line === "DATA") {
              state.inData = true;
              socket.write("354 go on\r\n");
            } else if (line === "QUIT") socket.end("221 bye\r\n");
            else socket.write("250 ok\r\n");
          }
        },
        close() {
          closed++;
        },
      },
    });
    const stop = () => {
      for (const timer of timers) clearInterval(timer);
      server.stop(true);
    };
    return { url: `smtp://127.0.0.1:${server.port}`, stop, closed: () => closed };
  }

  const mail: OutgoingMail = {
    store: "shop1",
    id: 1,
    kind: "customer_approved",
    from: { name: "Shop", address: "no-reply@localhost" },
    replyTo: null,
    to: "dana@example.com",
    subject: "Approved",
    text: "Hello",
    html: "<p>Hello</p>",
    messageId: "<shop1.1.0@localhost>",
    date: new Date(0),
  };

  test("is cut off after the time limit for one message, as an outage, and the next message goes on a new connection", async () => {
    const relay = tricklingRelay();
    const transport = new SmtpTransport(relay.url, 1_000);
    try {
      const failure = await transport.send(mail).then(
        () => null,
        (error) => error,
      );
      expect(describeFailure(failure)).toBe("the relay took over 1 s for one message; cut off");
      expect(classifyFailure(failure)).toBe("unavailable");
      // The stalled connection is closed, not left open beside the next one.
      expect(await eventually(() => (relay.closed() === 1 ? true : undefined))).toBe(true);
      expect(await transport.send(mail)).toBeUndefined();
    } finally {
      await transport.close();
      relay.stop();
    }
  });
});
