import { echo } from "../errors";
import { formatIsrael, formatIsraelOrNull } from "../format/time";
import { keyNameSchema } from "../keys/repository";
import { createHostKey, deleteHostKey, listHostKeys } from "../manage/host-keys";
import { checkValue, command, existingLocationOf, type FlagTable, locationOf } from "./args";
import { CliError, UsageError } from "./errors";
import { expiresFlag } from "./keys";
import { withPlatform } from "./open";
import { ifOutputLost, printJson, printLine, refuseDiscardedOutput } from "./output";

const create = command(
  {
    name: "host-keys create",
    summary: "Create a host key for the management API (/manage/v1): prints it once.",
    flags: {
      name: {
        type: "string",
        value: "N",
        required: true,
        help: "what the key is for, 1 to 100 characters",
      },
      expires: {
        type: "string",
        value: "never/30d/90d/1y",
        help: "when the key stops working (default never)",
      },
    } satisfies FlagTable,
  },
  async ({ values }) => {
    const name = checkValue(keyNameSchema, values.name ?? "", "--name");
    const now = Date.now();
    const expiresAt = expiresFlag(values.expires, now);
    refuseDiscardedOutput("the new host key's secret");
    const created = await withPlatform(locationOf(values), (platform) =>
      createHostKey(platform.db, name, expiresAt, now),
    );
    ifOutputLost(
      `host key ${created.id} was created but its secret was not written: delete it (storeapi host-keys delete ${created.id}) and create another`,
    );
    const result = {
      id: created.id,
      key: created.secret,
      hint: created.hint,
      expiresAt: formatIsraelOrNull(expiresAt),
    };
    if (values.json) return printJson(result);
    printLine(`created host key ${created.id} "${name}" (expires: ${result.expiresAt ?? "never"})`);
    printLine("");
    printLine(`  ${created.secret}`);
    printLine("");
    printLine("This is the only time the key is shown; store it now.");
  },
);

const list = command(
  { name: "host-keys list", summary: "List the host keys (never the keys themselves).", flags: {} },
  async ({ values }) => {
    const now = Date.now();
    const keys = await withPlatform(existingLocationOf(values), (platform) =>
      listHostKeys(platform.db),
    );
    const rows = keys.map((k) => ({
      id: k.id,
      name: k.name,
      hint: k.hint,
      createdAt: formatIsrael(k.createdAt),
      expiresAt: formatIsraelOrNull(k.expiresAt),
      expired: k.expiresAt !== null && k.expiresAt <= now,
    }));
    if (values.json) return printJson(rows);
    if (rows.length === 0) return printLine("no host keys");
    for (const r of rows) {
      printLine(
        `${String(r.id).padStart(4)}  ${r.name.padEnd(20)} ${r.hint}  created ${r.createdAt}  expires ${r.expiresAt ?? "never"}${r.expired ? " (expired)" : ""}`,
      );
    }
  },
);

const remove = command(
  {
    name: "host-keys delete",
    args: ["ID"],
    summary: "Delete a host key (401 on a running server within a second).",
    flags: {},
  },
  async ({ values, args: [idText] }) => {
    if (!/^[1-9]\d{0,14}$/.test(idText))
      throw new UsageError(`ID must be a positive integer, not "${echo(idText)}"`);
    const key = await withPlatform(existingLocationOf(values), (platform) =>
      deleteHostKey(platform.db, Number(idText), Date.now()),
    );
    if (!key) throw new CliError(`no host key with id ${idText}`);
    if (values.json)
      return printJson({ id: key.id, name: key.name, hint: key.hint, deleted: true });
    printLine(`deleted host key ${key.id} "${key.name}" (${key.hint})`);
  },
);

export const hostKeysCommands = [create, list, remove];
