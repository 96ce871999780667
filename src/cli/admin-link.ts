import { createAdminLink, parseOrigin } from "../admin/links";
import { Platform } from "../db/platform";
import { formatIsrael } from "../format/time";
import { dataDirOf, parseCommand, positionals, printJson } from "./args";
import { CliError, UsageError } from "./errors";

const USAGE = "storeapi admin-link SLUG [--origin URL]";

/** `storeapi admin-link SLUG`: a one-time sign-in link to the store's "API and keys" screen. */
export async function adminLinkCommand(argv: string[]): Promise<void> {
  const { values, positionals: args } = parseCommand(argv, { origin: { type: "string" } });
  const [slug] = positionals(args, ["SLUG"], USAGE);
  const origin = values.origin === undefined ? undefined : parseOrigin(values.origin);
  if (origin === null) throw new UsageError(`--origin must be like https://shop.example.com (scheme, host and port only), not "${values.origin}"`);
  const platform = await Platform.open(dataDirOf(values));
  try {
    const store = await platform.getStore(slug);
    if (!store) throw new CliError(`no store "${slug}"`);
    const link = await createAdminLink(platform.db, slug, origin ?? `https://${store.domain}`, Date.now());
    const result = { url: link.url, token: link.token, expiresAt: formatIsrael(link.expiresAt) };
    if (values.json) return printJson(result);
    console.log(result.url);
    console.log(`One use, valid until ${result.expiresAt}.`);
  } finally {
    await platform.close();
  }
}
