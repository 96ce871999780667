import { isDiskFull, isLocked } from "../db/driver";
import type { Location } from "../db/location";
import type { Store } from "../db/platform";
import type { StorePool } from "../db/pool";
import { echo } from "../errors";
import { formatIsrael, formatIsraelOrNull } from "../format/time";
import { AREAS, describePermissions } from "../keys/permissions";
import {
  createKey,
  deleteKey,
  expiryAt,
  isExpiryChoice,
  KeyInputError,
  KeyLimitError,
  KeyNotFoundError,
  keyNameSchema,
  type NewKey,
  prepareKey,
} from "../keys/repository";
import { KeyUsage } from "../keys/usage";
import { checkValue, command, existingLocationOf, type FlagTable, orList } from "./args";
import { CliError, UsageError } from "./errors";
import { withPlatformAndPool } from "./open";
import { ifOutputLost, printJson, printLine, refuseDiscardedOutput } from "./output";

/** `--expires never/30d/90d/1y` (default never) as the moment the key expires, or null. */
export function expiresFlag(value: string | undefined, now: number): number | null {
  const expires = value ?? "never";
  if (!isExpiryChoice(expires))
    throw new UsageError(`--expires takes never, 30d, 90d or 1y, not "${echo(expires)}"`);
  return expiryAt(expires, now);
}

/** Who did it, for the owner's email. */
const operator = () => `${process.env.USER ?? "an operator"} (command line)`;

/**
 * Opens the store for a key operation between two bumps of the store's key and mail
 * versions, as the server's own changes are made (`keyChanges`, src/deps.ts): the first
 * finds platform.db writable, so a full disk or a lock refuses the command before anything
 * changed (the bump refused after a delete left the key working on a running server,
 * with "the disk is full"); the second has a running server reload the keys and deliver
 * the notice. Should only the second be refused, the change stands and `untold` says so,
 * for the command to show what it made (a new key's secret) before it fails.
 */
async function withStore<T>(
  location: Location,
  slug: string,
  fn: (store: Store, pool: StorePool) => Promise<T>,
): Promise<{ result: T; untold?: string }> {
  return withPlatformAndPool(location, async (platform, pool) => {
    const store = await platform.getStore(slug);
    if (!store) throw new CliError(`no store "${slug}"`);
    await platform.markForKeyChange(slug); // before the notice is queued: see `mail_queued`
    const result = await fn(store, pool);
    try {
      await platform.bumpKeysAndMail(slug);
      return { result };
    } catch (error) {
      const why = isDiskFull(error)
        ? " (the disk is full)"
        : isLocked(error)
          ? " (it is locked)"
          : "";
      const untold = `a running server was not told of this change: platform.db could not record it${why}; until the store's next key change or the server's restart, it goes on with the keys it had`;
      return { result, untold };
    }
  });
}

/** After the output: the change stands, but a running server may not know it (exit 1). */
function failIfUntold(untold: string | undefined): void {
  if (untold) throw new CliError(untold);
}

const AREA_FLAGS = Object.fromEntries(
  AREAS.map((area) => [
    area,
    { type: "string", value: "P", help: `access to ${area}: none, read or write (default none)` },
  ]),
) as Record<(typeof AREAS)[number], { type: "string"; value: string; help: string }>;

/** The flags checked by the shared key rules (src/keys/repository.ts); a broken rule names its flag. */
function keyInput(
  values: { name?: string; expires?: string } & Partial<Record<(typeof AREAS)[number], string>>,
  now: number,
): NewKey {
  const { expires, ...permissions } = values;
  const name = checkValue(keyNameSchema, values.name ?? "", "--name");
  try {
    return prepareKey({ name, permissions, expires }, now, { requireAccess: true });
  } catch (error) {
    if (!(error instanceof KeyInputError)) throw error;
    if (error.field === "permissions") {
      throw new UsageError(
        `a key needs at least one permission: give ${orList(AREAS.map((area) => `--${area}`))} as read or write`,
      );
    }
    throw new UsageError(`--${error.field} ${error.problem}`);
  }
}

const create = command(
  {
    name: "keys create",
    args: ["SLUG"],
    summary:
      "Create an API key for a store: prints it once and queues a notice to the store owner.",
    flags: {
      name: {
        type: "string",
        value: "N",
        required: true,
        help: "what the key is for, 1 to 100 characters",
      },
      ...AREA_FLAGS,
      expires: {
        type: "string",
        value: "never/30d/90d/1y",
        help: "when the key stops working (default never)",
      },
    } satisfies FlagTable,
  },
  async ({ values, args: [slug] }) => {
    const now = Date.now();
    const input = keyInput(values, now);
    refuseDiscardedOutput("the new key's secret");
    const { permissions, expiresAt } = input;
    const { result: created, untold } = await withStore(
      existingLocationOf(values),
      slug,
      (store, pool) =>
        pool
          .use(slug, (db) => createKey(db, store, input, operator(), now))
          .catch((error) => {
            if (error instanceof KeyLimitError) throw new CliError(error.message);
            throw error;
          }),
    );
    ifOutputLost(
      `key ${created.id} of ${slug} was created but its secret was not written: delete it (storeapi keys delete ${slug} ${created.id}) and create another`,
    );
    const result = {
      id: created.id,
      key: created.secret,
      hint: created.hint,
      permissions,
      expiresAt: formatIsraelOrNull(expiresAt),
    };
    if (values.json) printJson(result);
    else {
      printLine(
        `created key ${created.id} "${values.name}" for ${slug} (${describePermissions(permissions)})`,
      );
      printLine(`expires: ${result.expiresAt ?? "never"}`);
      printLine("");
      printLine(`  ${created.secret}`);
      printLine("");
      printLine(
        "This is the only time the key is shown; store it now. An email to the store owner is queued.",
      );
    }
    failIfUntold(untold);
  },
);

const LIST = {
  name: "keys list",
  args: ["SLUG"],
  summary: "List a store's keys (never the keys themselves).",
  flags: {},
};

const list = command(LIST, ({ values, args: [slug] }) =>
  withPlatformAndPool(existingLocationOf(values), async (platform, pool) => {
    const store = await platform.getStore(slug);
    if (!store) throw new CliError(`no store "${slug}"`);
    const usage = new KeyUsage(platform);
    const keys = (await pool.use(slug, (db) => usage.listKeys(db, store))).filter(
      (k) => k.deletedAt === null,
    );
    const rows = keys.map((k) => ({
      id: k.id,
      name: k.name,
      hint: k.hint,
      permissions: k.permissions,
      createdAt: formatIsrael(k.createdAt),
      expiresAt: formatIsraelOrNull(k.expiresAt),
      lastUsedAt: formatIsraelOrNull(k.lastUsedAt),
      expired: k.expiresAt !== null && k.expiresAt <= Date.now(),
    }));
    if (values.json) return printJson(rows);
    if (rows.length === 0) return printLine(`no keys for ${slug}`);
    for (const r of rows) {
      printLine(
        `${String(r.id).padStart(4)}  ${r.name.padEnd(20)} ${r.hint}  ${describePermissions(r.permissions)}  ` +
          `created ${r.createdAt}  expires ${r.expiresAt ?? "never"}${r.expired ? " (expired)" : ""}  last used ${r.lastUsedAt ?? "never"}`,
      );
    }
  }),
);

const remove = command(
  {
    name: "keys delete",
    args: ["SLUG", "ID"],
    summary: "Delete a key and queue a notice to the store owner.",
    flags: {},
  },
  async ({ values, args: [slug, idText] }) => {
    if (!/^[1-9]\d{0,14}$/.test(idText))
      throw new UsageError(`ID must be a positive integer, not "${echo(idText)}"`);
    const { result: key, untold } = await withStore(
      existingLocationOf(values),
      slug,
      (store, pool) =>
        pool
          .use(slug, (db) => deleteKey(db, store, Number(idText), operator()))
          .catch((error) => {
            if (error instanceof KeyNotFoundError) throw new CliError(error.message);
            throw error;
          }),
    );
    if (values.json) printJson({ id: key.id, name: key.name, hint: key.hint, deleted: true });
    else
      printLine(
        `deleted key ${key.id} "${key.name}" (${key.hint}) from ${slug}; an email to the store owner is queued`,
      );
    failIfUntold(untold);
  },
);

export const keysCommands = [create, list, remove];
