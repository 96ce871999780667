import { createSignInLink } from "../admin/links";
import { Platform } from "../db/platform";
import { StorePool } from "../db/pool";
import { formatIsrael } from "../format/time";
import { dataDirOf, parseCommand, positionals, printJson } from "./args";
import { CliError, UsageError } from "./errors";

const USAGE = "storeapi admin-link SLUG [--origin URL] [--json]";

/** `--origin`: an http(s) origin such as `http://shop1.localhost:8080`, nothing after the host. */
export function parseOrigin(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--origin must be a URL such as https://shop.example, not "${text}"`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new UsageError(`--origin must start with https:// or http://, not "${text}"`);
  }
  if (url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
    throw new UsageError(`--origin takes only scheme, host and port (e.g. ${url.origin}), not "${text}"`);
  }
  return url.origin;
}

/** Prints a one-time link (15 minutes) that signs in to the store's "API and keys" screen. */
export async function adminLinkCommand(argv: string[]): Promise<void> {
  const { values, positionals: args } = parseCommand(argv, { origin: { type: "string" } });
  const [slug] = positionals(args, ["SLUG"], USAGE);
  const explicitOrigin = values.origin === undefined ? undefined : parseOrigin(values.origin);
  const platform = await Platform.open(dataDirOf(values));
  const pool = new StorePool(dataDirOf(values));
  try {
    const store = await platform.getStore(slug);
    if (!store) throw new CliError(`no store "${slug}"`);
    const origin = explicitOrigin ?? `https://${store.domain}`;
    const link = await pool.use(slug, (db) => createSignInLink(db, origin));
    if (values.json) return printJson({ url: link.url, token: link.token, expiresAt: formatIsrael(link.expiresAt) });
    console.log(link.url);
  } finally {
    await pool.close();
    await platform.close();
  }
}
