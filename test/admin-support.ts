import { createSignInLink } from "../src/admin/links";
import { StorePool } from "../src/db/pool";
import { type ApiAnswer, readAnswer } from "./helpers";
import { testLocation } from "./sqld";

/**
 * A form-posting client for the admin screen without a browser: keeps the session
 * cookie, sends same-origin headers like a browser would (unless told otherwise) and
 * never follows redirects, so each 303 can be asserted.
 */
export class AdminClient {
  /** The cookies the screen set, by name (the session's, and a new key's page's). */
  private jar = new Map<string, string>();
  formToken: string | undefined;

  /** The `Cookie` header this client sends (undefined with none). */
  get cookie(): string | undefined {
    return this.jar.size === 0
      ? undefined
      : [...this.jar].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  set cookie(header: string | undefined) {
    this.jar.clear();
    for (const pair of header?.split(/;\s*/) ?? []) this.keep(pair);
  }

  private keep(pair: string): void {
    const at = pair.indexOf("=");
    if (at > 0) this.jar.set(pair.slice(0, at), pair.slice(at + 1));
  }

  constructor(
    readonly baseUrl: string,
    readonly host = "shop1.test",
  ) {}

  get origin(): string {
    return `http://${this.host}`;
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<ApiAnswer> {
    const answer = await this.send("GET", path, undefined, headers);
    const token = /name="formToken" value="([^"]+)"/.exec(answer.text)?.[1];
    if (token) this.formToken = token;
    return answer;
  }

  head(path: string): Promise<ApiAnswer> {
    return this.send("HEAD", path, undefined, {});
  }

  /** Posts a form; same origin by `Sec-Fetch-Site` unless `headers` says otherwise; the form token added unless given. */
  post(
    path: string,
    fields: Record<string, string> = {},
    headers: Record<string, string> = { "Sec-Fetch-Site": "same-origin" },
  ) {
    const body = new URLSearchParams({
      ...(this.formToken ? { formToken: this.formToken } : {}),
      ...fields,
    });
    return this.send("POST", path, body.toString(), {
      "Content-Type": "application/x-www-form-urlencoded",
      ...headers,
    });
  }

  /** Posts a form body as given (already URL-encoded, so it may hold any bytes) after the form token. */
  postEncoded(path: string, encoded: string) {
    const token = encodeURIComponent(this.formToken ?? "");
    return this.send("POST", path, `formToken=${token}&${encoded}`, {
      "Content-Type": "application/x-www-form-urlencoded",
      "Sec-Fetch-Site": "same-origin",
    });
  }

  async signIn(token: string): Promise<ApiAnswer> {
    const answer = await this.get(`/api/admin/sign-in?token=${token}`);
    await this.get("/api/admin/"); // picks up the form token
    return answer;
  }

  private async send(
    method: string,
    path: string,
    body: string | undefined,
    headers: Record<string, string>,
  ): Promise<ApiAnswer> {
    const response = await fetch(this.baseUrl + path, {
      method,
      redirect: "manual",
      headers: { Host: this.host, ...(this.cookie ? { Cookie: this.cookie } : {}), ...headers },
      body,
    });
    for (const set of response.headers.getSetCookie()) {
      const pair = set.split(";")[0];
      if (/Max-Age=0/i.test(set)) this.jar.delete(pair.slice(0, pair.indexOf("=")));
      else this.keep(pair);
    }
    return readAnswer(response);
  }
}

/** A sign-in token for `slug`, made the way `storeapi admin-link` makes one. */
export async function signInToken(
  dataDir: string,
  slug: string,
  now = Date.now(),
): Promise<string> {
  const pool = new StorePool(await testLocation(dataDir));
  try {
    return (await pool.use(slug, (db) => createSignInLink(db, `https://${slug}.test`, now))).token;
  } finally {
    await pool.close();
  }
}

/** The "new key" form's fields for a key that writes orders only. */
export const ORDERS_WRITE = {
  name: "ERP",
  products: "none",
  orders: "write",
  customers: "none",
  leads: "none",
  expires: "never",
};

/** The text of the element with this id (no nested tags expected). */
export const textOfId = (html: string, id: string) =>
  new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)?.[1];
