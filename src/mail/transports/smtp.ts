import { createTransport, type SMTPPoolOptions, type Transporter } from "nodemailer";
import { type OutgoingMail, type Transport, toMessage } from "./transport";

/**
 * `--smtp URL`:
 * - `smtp://user:pass@host:port`: plain connection, upgraded with STARTTLS whenever the
 *   server offers it (port 587 when omitted);
 * - `smtps://user:pass@host:port`: TLS from the first byte (port 465 when omitted);
 * - user and password are percent-decoded; both optional (no login without them);
 * - query `?starttls=required` refuses to send unless the upgrade happens,
 *   `?starttls=off` never upgrades, `?tls=insecure` accepts a certificate that does not
 *   verify (self-signed relays; development only).
 */
export function parseSmtpUrl(text: string): SMTPPoolOptions {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error("--smtp must be a URL like smtp://user:pass@host:port or smtps://…");
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:")
    throw new Error("--smtp must start with smtp:// or smtps://");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!host) throw new Error("--smtp needs a host, as in smtp://user:pass@host:port");
  if (url.pathname && url.pathname !== "/") throw new Error("--smtp takes no path after host:port");
  if (url.port === "0") throw new Error("--smtp: port 0 is no relay's port; give the relay's");
  const secure = url.protocol === "smtps:";
  const options: SMTPPoolOptions = {
    host,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    auth:
      url.username || url.password
        ? { user: decoded(url.username, "user name"), pass: decoded(url.password, "password") }
        : undefined,
  };
  for (const [key, value] of url.searchParams) {
    if (url.searchParams.getAll(key).length > 1)
      throw new Error(`--smtp: "${key}" is given more than once; give it once`);
    if (key === "starttls" && value === "required") options.requireTLS = true;
    else if (key === "starttls" && value === "off") options.ignoreTLS = true;
    else if (key === "tls" && value === "insecure") options.tls = { rejectUnauthorized: false };
    else
      throw new Error(
        `--smtp: unknown option "${value ? `${key}=${value}` : key}"; use starttls=required, starttls=off or tls=insecure`,
      );
  }
  if (secure && options.ignoreTLS)
    throw new Error("--smtp: starttls=off does not apply to smtps://");
  return options;
}

/**
 * Whether the URL's password would go in clear to a relay that offers no STARTTLS (or to
 * one a man in the middle strips it from): a login over `smtp://` to another machine
 * without `?starttls=required`.
 */
export function loginMayGoInClear(url: string): boolean {
  const { auth, secure, requireTLS, host = "" } = parseSmtpUrl(url);
  const loopback = host === "localhost" || host === "::1" || host.startsWith("127.");
  return Boolean(auth) && !secure && !requireTLS && !loopback;
}

/** A percent-decoded part of the URL; a bad escape is named without the part's text (a password). */
function decoded(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new Error(`--smtp: the ${what} has a bad %-escape; write % itself as %25`);
  }
}

/**
 * The most one message may take, start to end. The limits on silence alone let a relay
 * that sends a byte every few seconds (`250-` and no end of line) hold every store's mail
 * on the one connection for good.
 */
export const MESSAGE_TIME_LIMIT_MS = 60_000;

/** Delivery through one pooled SMTP connection, reused between messages. */
export class SmtpTransport implements Transport {
  readonly name = "smtp";
  private readonly transporter: Transporter;

  constructor(
    url: string,
    private readonly messageTimeLimitMs = MESSAGE_TIME_LIMIT_MS,
  ) {
    this.transporter = createTransport({
      ...parseSmtpUrl(url),
      pool: true,
      maxConnections: 1,
      // Bounded waits: a stalled relay must not hold a message (or a shutdown) for minutes.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
      // Let a relay on this machine (`localhost`) be reached when only loopback is up.
      allowInternalNetworkInterfaces: true,
    });
  }

  async send(mail: OutgoingMail): Promise<void> {
    // nodemailer closes the connection of a message whose signal aborts; the next gets a new one.
    const signal = AbortSignal.timeout(this.messageTimeLimitMs);
    try {
      await this.transporter.sendMail({ ...toMessage(mail), signal });
    } catch (error) {
      if (!signal.aborted) throw error;
      const seconds = this.messageTimeLimitMs / 1000;
      throw new Error(`the relay took over ${seconds} s for one message; cut off`);
    }
  }

  async close(): Promise<void> {
    this.transporter.close();
  }
}
