import { COMMAND_STORES_WAIT_MS, commandStoresBusy, commandStoresWaiting } from "../db/data-dir";
import type { Location } from "../db/location";
import type { NewStore, Platform, Store } from "../db/platform";
import { insertOrderStatuses } from "../stores/order-statuses";
import {
  DEFAULT_ORDER_STATUSES,
  domainSchema,
  domainUnderPlatform,
  ownerEmailSchema,
  planSchema,
  slugSchema,
  storeNameSchema,
} from "../stores/rules";
import {
  type CommandSpec,
  checkValue,
  command,
  existingLocationOf,
  locationOf,
  onOff,
  PLATFORM_DOMAIN_FLAG,
  platformDomainOf,
} from "./args";
import { CliError, UsageError } from "./errors";
import { withPlatform } from "./open";
import { printJson, printLine } from "./output";

/** A store's own domain, checked like a fixture's: a host name outside the platform domain. */
function checkDomain(value: string | undefined, platformDomain: string): string | undefined {
  if (value === undefined) return undefined;
  const domain = checkValue(domainSchema, value, "--domain");
  if (domainUnderPlatform(domain, platformDomain)) {
    throw new UsageError(
      `--domain "${domain}" lies under the platform domain "${platformDomain}", where {slug}.${platformDomain} addresses live; use the store's own domain`,
    );
  }
  return domain;
}

const optional = <T>(value: string | undefined, check: (value: string) => T): T | undefined =>
  value === undefined ? undefined : check(value);

const storeJson = (s: Store) => ({
  slug: s.slug,
  name: s.name,
  domain: s.domain,
  plan: s.plan,
  ownerEmail: s.ownerEmail,
  settings: s.settings,
});

const add = command(
  {
    name: "stores add",
    args: ["SLUG"],
    summary: "Create a store.",
    flags: {
      domain: {
        type: "string",
        value: "D",
        required: true,
        help: "the store's own host name, e.g. shop.example.com",
      },
      plan: {
        type: "string",
        value: "P",
        required: true,
        help: "free, starter, growth, pro or enterprise",
      },
      "owner-email": {
        type: "string",
        value: "E",
        required: true,
        help: "the owner's address: key notices go there",
      },
      name: {
        type: "string",
        value: "N",
        help: "the store's name, 1 to 100 characters (default SLUG)",
      },
      "platform-domain": PLATFORM_DOMAIN_FLAG,
    },
  },
  async ({ values, args: [slug] }) => {
    const store: NewStore = {
      slug: checkValue(slugSchema, slug, "SLUG"),
      name: optional(values.name, (name) => checkValue(storeNameSchema, name, "--name")) ?? slug,
      domain: checkDomain(values.domain, platformDomainOf(values)) as string,
      plan: checkValue(planSchema, values.plan as string, "--plan"),
      ownerEmail: checkValue(ownerEmailSchema, values["owner-email"] as string, "--owner-email"),
      settings: { manualCustomerApproval: false, notifyStatusChange: true, registration: true },
    };
    const location = locationOf(values);
    await withPlatform(location, (platform) =>
      location.changeStores(
        COMMAND_STORES_WAIT_MS,
        commandStoresBusy(location.describe),
        async () => {
          if (await platform.getStore(slug)) throw new CliError(`store "${slug}" already exists`);
          await refuseTakenDomain(platform, store.domain, slug);
          // Replaces any unregistered leftover (a load that crashed before registering).
          await location.createStore(slug);
          await addDefaultStatuses(location, slug)
            .then(() => platform.addStore(store))
            .catch(async (error) => {
              await location.deleteStore(slug); // not registered: no leftover
              await refuseTakenDomain(platform, store.domain, slug);
              throw error;
            });
        },
        commandStoresWaiting(location.describe),
      ),
    );
    if (values.json)
      printJson(storeJson({ ...store, keysVersion: 0, mailVersion: 0, createdAt: Date.now() }));
    else printLine(`created store ${slug} at https://${store.domain}/api/v1 (plan ${store.plan})`);
  },
);

async function refuseTakenDomain(platform: Platform, domain: string, slug: string): Promise<void> {
  if (await platform.domainTaken(domain, slug))
    throw new CliError(`domain "${domain}" already belongs to another store`);
}

/** The order statuses a new store starts with, as through the management API. */
async function addDefaultStatuses(location: Location, slug: string): Promise<void> {
  const db = await location.openStore(slug);
  try {
    await db.transaction((tx) => insertOrderStatuses(tx, DEFAULT_ORDER_STATUSES));
  } finally {
    await db.close();
  }
}

const SET = {
  name: "stores set",
  args: ["SLUG"],
  summary: "Change a store. Give at least one thing to change.",
  flags: {
    plan: { type: "string", value: "P", help: "free, starter, growth, pro or enterprise" },
    domain: { type: "string", value: "D", help: "the store's own host name" },
    "manual-approval": { type: "string", value: "on/off", help: "new customers wait for approval" },
    "notify-status": {
      type: "string",
      value: "on/off",
      help: "email customers when their order's status changes",
    },
    registration: { type: "string", value: "on/off", help: "customers may register" },
    name: { type: "string", value: "N", help: "the store's name, 1 to 100 characters" },
    "owner-email": { type: "string", value: "E", help: "the owner's address" },
    "platform-domain": PLATFORM_DOMAIN_FLAG,
  },
} satisfies CommandSpec;

/** What `stores set` can change: every flag but the platform domain it checks against. */
const SET_CHANGES = Object.keys(SET.flags)
  .filter((flag) => flag !== "platform-domain")
  .map((flag) => `--${flag}`);

const set = command(SET, async ({ values, args: [slug] }) => {
  const changes = {
    name: optional(values.name, (name) => checkValue(storeNameSchema, name, "--name")),
    ownerEmail: optional(values["owner-email"], (email) =>
      checkValue(ownerEmailSchema, email, "--owner-email"),
    ),
    plan: optional(values.plan, (plan) => checkValue(planSchema, plan, "--plan")),
    domain: checkDomain(values.domain, platformDomainOf(values)),
    manualCustomerApproval: onOff(values["manual-approval"], "manual-approval"),
    notifyStatusChange: onOff(values["notify-status"], "notify-status"),
    registration: onOff(values.registration, "registration"),
  };
  if (Object.values(changes).every((value) => value === undefined)) {
    throw new UsageError(`nothing to change: give at least one of ${SET_CHANGES.join(", ")}`);
  }
  const updated = await withPlatform(existingLocationOf(values), async (platform) => {
    if (!(await platform.getStore(slug))) throw new CliError(`no store "${slug}"`);
    const { domain } = changes;
    const refuseTaken = () => domain && refuseTakenDomain(platform, domain, slug);
    await refuseTaken();
    const { manualCustomerApproval, notifyStatusChange, registration, ...fields } = changes;
    const store = await platform
      .changeStore(slug, {
        ...fields,
        settings: { manualCustomerApproval, notifyStatusChange, registration },
      })
      .catch(async (error) => {
        await refuseTaken(); // the management API may have given it to another store since
        throw error;
      });
    if (!store) throw new CliError(`no store "${slug}"`);
    return store;
  });
  if (values.json) printJson(storeJson(updated));
  else printLine(`updated store ${slug}`);
});

const list = command(
  { name: "stores list", summary: "List the stores.", flags: {} },
  async ({ values }) => {
    const stores = await withPlatform(existingLocationOf(values), (platform) =>
      platform.listStores(),
    );
    if (values.json) return printJson(stores.map(storeJson));
    if (stores.length === 0) return printLine("no stores");
    for (const s of stores) printLine(`${s.slug.padEnd(20)} ${s.domain.padEnd(32)} ${s.plan}`);
  },
);

export const storesCommands = [add, set, list];
