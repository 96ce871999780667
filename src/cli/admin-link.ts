import { createSignInLink, parseOrigin } from "../admin/links";
import { Platform } from "../db/platform";
import { StorePool } from "../db/pool";
import { echo } from "../errors";
import { formatIsrael } from "../format/time";
import { command, existingLocationOf, type FlagTable } from "./args";
import { CliError, UsageError } from "./errors";
import { printJson, printLine } from "./output";

/** `storeapi admin-link SLUG`: a one-time sign-in link to the store's "API and keys" screen. */
export const adminLinkCommand = command(
  {
    name: "admin-link",
    args: ["SLUG"],
    summary: "Print a one-time, 15-minute sign-in link to the store's API keys screen.",
    flags: {
      origin: {
        type: "string",
        value: "URL",
        help: "scheme, host and port of the link (default https://{the store's domain})",
      },
    } satisfies FlagTable,
  },
  async ({ values, args: [slug] }) => {
    const origin = values.origin === undefined ? undefined : parseOrigin(values.origin);
    if (origin === null)
      throw new UsageError(
        `--origin must be like https://shop.example.com (scheme, host and port only), not "${echo(values.origin ?? "")}"`,
      );
    const location = existingLocationOf(values);
    const platform = await Platform.open(location);
    const pool = new StorePool(location);
    try {
      const store = await platform.getStore(slug);
      if (!store) throw new CliError(`no store "${slug}"`);
      const link = await pool.use(slug, (db) =>
        createSignInLink(db, origin ?? `https://${store.domain}`),
      );
      const result = { url: link.url, token: link.token, expiresAt: formatIsrael(link.expiresAt) };
      if (values.json) return printJson(result);
      printLine(result.url); // alone on stdout, so a script can take it as it is
      console.error(`One use, valid until ${result.expiresAt}.`);
    } finally {
      await pool.close();
      await platform.close();
    }
  },
);
