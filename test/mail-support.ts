import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";

/** A message as the test SMTP server received it, with the parts the tests look at decoded. */
export interface Received {
  envelopeFrom: string;
  envelopeTo: string[];
  raw: string;
  /** Header values by lower-case name, unfolded and RFC 2047-decoded (first occurrence). */
  headers: Record<string, string>;
  text: string;
  html: string;
}

export interface SmtpPeer {
  port: number;
  url: string;
  messages: Received[];
  /** Recipients refused so far (each counts one attempt). */
  rejections: number;
  /** Resolves once `count` messages arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/**
 * A real SMTP server on a loopback port (plain SMTP: no certificate in tests, so STARTTLS
 * is not offered). `rejectWith` refuses every recipient with that reply (e.g. 550).
 */
export async function startSmtp(
  options: {
    port?: number;
    rejectWith?: { code: number; message: string };
    auth?: { user: string; pass: string };
    /** A slow relay: wait this long after the message data before accepting it. */
    acceptDelayMs?: number;
    /** Called when message data starts arriving (a message is in the client's hands). */
    onDataStart?: () => void;
  } = {},
): Promise<SmtpPeer> {
  const messages: Received[] = [];
  const waiters: Array<() => void> = [];
  const peer: SmtpPeer = {
    port: 0,
    url: "",
    messages,
    rejections: 0,
    waitFor: (count, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length < count) return false;
          clearTimeout(timer);
          resolve(messages);
          return true;
        };
        const timer = setTimeout(
          () => reject(new Error(`only ${messages.length} of ${count} messages arrived`)),
          timeoutMs,
        );
        const waiter = () => {
          if (!check()) waiters.push(waiter);
        };
        waiter();
      }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const serverOptions: SMTPServerOptions = {
    secure: false,
    disabledCommands: options.auth ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    allowInsecureAuth: true,
    authOptional: !options.auth,
    logger: false,
    closeTimeout: 100,
    onAuth(auth, _session, callback) {
      if (
        options.auth &&
        auth.username === options.auth.user &&
        auth.password === options.auth.pass
      ) {
        return callback(null, { user: auth.username });
      }
      callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
    },
    onRcptTo(_address, _session, callback) {
      if (!options.rejectWith) return callback();
      peer.rejections++;
      callback(
        Object.assign(new Error(options.rejectWith.message), {
          responseCode: options.rejectWith.code,
        }),
      );
    },
    onData(stream, session, callback) {
      options.onDataStart?.();
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("latin1");
        const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        setTimeout(() => {
          messages.push({
            envelopeFrom,
            envelopeTo: session.envelope.rcptTo.map((r) => r.address),
            raw,
            ...parseMessage(raw),
          });
          for (const waiter of waiters.splice(0)) waiter();
          callback();
        }, options.acceptDelayMs ?? 0);
      });
    },
  };
  const server = new SMTPServer(serverOptions);
  server.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  peer.port = (server.server.address() as AddressInfo).port;
  peer.url = `smtp://127.0.0.1:${peer.port}`;
  return peer;
}

/** Polls `probe` until it returns a value other than undefined (bounded). */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(20);
  }
}

// --- a small RFC 5322 / MIME reader, enough for the messages nodemailer writes -----------

const latin1Bytes = (s: string) => Buffer.from(s, "latin1");

function decodeQuotedPrintable(body: string, header = false): Buffer {
  const text = header ? body.replace(/_/g, " ") : body.replace(/=\r?\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === "=" && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(text.charCodeAt(i) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/** RFC 2047: adjacent encoded words join before UTF-8 decoding (a character may span two). */
export function decodeHeader(value: string): string {
  const word = /=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g;
  const joined = value.replace(/(\?=)\s+(?==\?)/g, "$1");
  let out = "";
  let pending: Buffer[] = [];
  let last = 0;
  const flush = () => {
    out += Buffer.concat(pending).toString("utf8");
    pending = [];
  };
  for (const match of joined.matchAll(word)) {
    if (match.index > last) {
      flush();
      out += joined.slice(last, match.index);
    }
    const [, , encoding, data] = match;
    pending.push(
      encoding.toUpperCase() === "B"
        ? Buffer.from(data, "base64")
        : decodeQuotedPrintable(data, true),
    );
    last = match.index + match[0].length;
  }
  flush();
  return out + joined.slice(last);
}

function splitEntity(raw: string): { headers: Record<string, string>; body: string } {
  const end = raw.indexOf("\r\n\r\n");
  const head = end === -1 ? raw : raw.slice(0, end);
  const body = end === -1 ? "" : raw.slice(end + 4);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers[name] ??= decodeHeader(latin1Bytes(line.slice(colon + 1).trim()).toString("utf8"));
  }
  return { headers, body };
}

/** A body part's text, line ends as `\n`. */
function decodeBody(headers: Record<string, string>, body: string): string {
  return decodeBodyBytes(headers, body).replace(/\r\n/g, "\n");
}

function decodeBodyBytes(headers: Record<string, string>, body: string): string {
  const encoding = (headers["content-transfer-encoding"] ?? "7bit").toLowerCase();
  if (encoding === "base64")
    return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  if (encoding === "quoted-printable") return decodeQuotedPrintable(body).toString("utf8");
  return latin1Bytes(body).toString("utf8");
}

export function parseMessage(raw: string): {
  headers: Record<string, string>;
  text: string;
  html: string;
} {
  const { headers, body } = splitEntity(raw);
  const found = { text: "", html: "" };
  const walk = (partHeaders: Record<string, string>, partBody: string) => {
    const type = partHeaders["content-type"] ?? "text/plain";
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (type.toLowerCase().startsWith("multipart/") && boundary) {
      for (const chunk of partBody.split(`--${boundary}`).slice(1)) {
        if (chunk.startsWith("--")) break;
        const part = splitEntity(chunk.replace(/^\r\n/, ""));
        walk(part.headers, part.body.replace(/\r\n$/, ""));
      }
    } else if (type.toLowerCase().startsWith("text/html")) {
      found.html = decodeBody(partHeaders, partBody);
    } else if (type.toLowerCase().startsWith("text/plain")) {
      found.text = decodeBody(partHeaders, partBody);
    }
  };
  walk(headers, body);
  return { headers, ...found };
}

/** `Name <address>` from an address header, the name unquoted. */
export function parseAddress(value: string): { name: string; address: string } {
  const match = /^\s*"?(.*?)"?\s*<([^>]+)>\s*$/.exec(value);
  return match ? { name: match[1], address: match[2] } : { name: "", address: value.trim() };
}
