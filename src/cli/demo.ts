import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import demoFixture from "../../fixtures/demo.json" with { type: "json" };
import { DataDirLock } from "../db/data-dir";
import { envVariable } from "../env";
import { objectSource } from "../load/source";
import { startServer } from "../server";
import { COMMON_FLAGS, command, type FlagTable, locationOf } from "./args";
import { CliError, UsageError } from "./errors";
import { loadInto } from "./load";
import { printJson, printLine } from "./output";
import { refuseUnusableReplicas, SERVE_OPTIONS, serveConfigFrom, stopOnSignals } from "./serve";

const MARKER = ".storeapi-demo";

interface DemoStore {
  slug: string;
  name?: string;
  domain: string;
  plan: string;
  orderStatuses?: Array<{ id: number; name: string }>;
  keys?: Array<{ name: string; secret?: string; permissions?: Record<string, string> }>;
  orders?: Array<{ id?: number; status: number; customer?: { email?: string } }>;
}

/**
 * The PATCH example: the newest order that has an email and is not yet shipped, moved
 * to the "Shipped" status, so running it really queues the customer's status email.
 */
function shippingExample(store: DemoStore | undefined): { orderId: number; statusId: number } {
  const statuses = store?.orderStatuses ?? [];
  const shipped = statuses.find((s) => /ship/i.test(s.name))?.id ?? statuses.at(-1)?.id ?? 3;
  const candidates = (store?.orders ?? []).filter(
    (o) => o.id !== undefined && o.customer?.email && o.status < shipped && o.status > 2,
  );
  return { orderId: candidates.at(-1)?.id ?? 1, statusId: shipped };
}

/**
 * Empties the demo directory. Only one the demo made (its marker file inside) is emptied,
 * and not while a demo serves it; any other directory must be new or empty: `--data .`
 * or `--data ~` must never delete what is there.
 */
function freshDemoDir(dir: string): void {
  if (existsSync(join(dir, MARKER))) {
    if (DataDirLock.isHeld(dir))
      throw new CliError(`a demo is serving ${dir}; stop it first, or pick another --data`);
  } else if (existsSync(dir) && !isEmptyDirectory(dir)) {
    throw new CliError(
      `${dir} holds files that the demo did not create; pick a new or empty --data for the demo`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, MARKER), "created by storeapi demo; emptied on every demo start\n");
}

function isEmptyDirectory(dir: string): boolean {
  if (!statSync(dir).isDirectory()) throw new CliError(`${dir} is a file; give --data a directory`);
  return readdirSync(dir).length === 0;
}

/**
 * A demo store's address: its alternative name on the scheme and port the demo serves
 * (`{slug}.localhost` resolves to this machine; another platform domain needs its own DNS).
 */
const storeOrigin = (base: string, slug: string | undefined, platformDomain: string) => {
  const url = new URL(base);
  return `${url.protocol}//${slug}.${platformDomain}:${url.port}`;
};

function printIntro(
  stores: DemoStore[],
  base: string,
  platformDomain: string,
  mailDir: string | null,
): void {
  const origin = (slug: string | undefined) => storeOrigin(base, slug, platformDomain);
  printLine("storeapi demo: these stores are loaded from fixtures/demo.json");
  printLine("");
  for (const store of stores) {
    printLine(
      `  ${store.slug}  ${store.name ?? ""}  (plan ${store.plan})  ${origin(store.slug)}/api/v1`,
    );
    for (const key of store.keys ?? []) {
      const perms = Object.entries(key.permissions ?? {})
        .map(([a, p]) => `${a}:${p}`)
        .join(" ");
      if (key.secret) printLine(`      key "${key.name}": ${key.secret}   ${perms}`);
    }
  }
  const [first, , free] = stores;
  const firstKey = first?.keys?.[0]?.secret ?? "";
  const freeKey = free?.keys?.[0]?.secret ?? "";
  const { orderId, statusId } = shippingExample(first);
  printLine("");
  printLine("Try:");
  printLine(
    `  curl -s "${origin(first?.slug)}/api/v1/orders?limit=2" -H "Authorization: Bearer ${firstKey}"`,
  );
  printLine(
    `  curl -s -X PATCH ${origin(first?.slug)}/api/v1/orders/${orderId} -H "Authorization: Bearer ${firstKey}" ` +
      `-H "Content-Type: application/json" -d '{"status":${statusId},"trackingNumber":"RR123456789IL","notifyCustomer":true}'`,
  );
  printLine(`  curl -s ${origin(free?.slug)}/api/v1/products -H "X-Api-Key: ${freeKey}"`);
  if (mailDir) {
    printLine("");
    printLine(`Emails the demo sends are written to ${mailDir}/ (one .eml file each).`);
  }
  printLine("");
  printLine(`Reference: ${base}/api/v1/docs   Stop with Ctrl-C.`);
  printLine("");
}

/** serve's flags, with the demo's own defaults in their help. */
const DEMO_OPTIONS = {
  ...SERVE_OPTIONS,
  "mail-dir": {
    ...SERVE_OPTIONS["mail-dir"],
    help: "write each email as an .eml file in DIR (default DATA/mail, unless --smtp is given); env STOREAPI_MAIL_DIR",
  },
  "log-level": {
    ...SERVE_OPTIONS["log-level"],
    help: "debug, info, warn, error, silent (default warn: no line per request); env STOREAPI_LOG_LEVEL",
  },
  data: {
    ...COMMON_FLAGS.data,
    help: "the demo's data directory, emptied at every demo start (default ./demo-data)",
  },
} satisfies FlagTable;

export const demoCommand = command(
  {
    name: "demo",
    summary:
      "Load the demo stores into a fresh ./demo-data and serve them on 127.0.0.1:8080 with plain HTTP allowed.",
    flags: DEMO_OPTIONS,
  },
  async ({ values }) => {
    const dataDir = values.data ?? "./demo-data";
    if (locationOf({ ...values, data: dataDir }).remote)
      throw new UsageError("demo keeps its data in files under --data; drop --libsql-url");
    // Its emails go to files the user can open, unless SMTP or another directory is given.
    const mailDir =
      values.smtp || envVariable("STOREAPI_SMTP") ? {} : { "mail-dir": join(dataDir, "mail") };
    const config = serveConfigFrom(values, dataDir, {
      "allow-http": true,
      "log-level": "warn",
      ...mailDir,
    });
    refuseUnusableReplicas(config);
    // Only a valid command line empties the demo directory.
    freshDemoDir(dataDir);
    await loadInto(dataDir, objectSource(demoFixture), {
      replace: false,
      platformDomain: config.platformDomain,
    });
    const server = await startServer(config);
    stopOnSignals(server); // before the intro: whoever reads it may signal at once
    const stores = (demoFixture as { stores: DemoStore[] }).stores;
    const summary = stores.map(({ slug, name, domain, plan, keys }) => ({
      slug,
      name,
      domain,
      plan,
      keys,
    }));
    if (values.json) printJson({ url: server.url, dataDir, stores: summary });
    else printIntro(stores, server.url, config.platformDomain, config.mailDir);
  },
);
