import { Platform, type NewStore, type Store } from "../db/platform";
import { StorePool } from "../db/pool";
import { DOMAIN_PATTERN, SLUG_PATTERN } from "../fixtures/load";
import { isPlan, PLANS, type Plan } from "../plans";
import { dataDirOf, existingDataDirOf, onOff, parseCommand, positionals, printJson, runSubcommand } from "./args";
import { CliError, UsageError } from "./errors";

const USAGE_ADD = "storeapi stores add SLUG --domain D --plan P --owner-email E [--name N]";
const USAGE_SET =
  "storeapi stores set SLUG [--plan P] [--domain D] [--manual-approval on/off] [--notify-status on/off] [--registration on/off]";

function checkPlan(plan: string | undefined): Plan | undefined {
  if (plan !== undefined && !isPlan(plan)) throw new UsageError(`--plan must be one of ${PLANS.join(", ")}`);
  return plan as Plan | undefined;
}

function checkDomain(domain: string | undefined): string | undefined {
  if (domain !== undefined && !DOMAIN_PATTERN.test(domain)) throw new UsageError(`--domain "${domain}" is not a host name`);
  return domain?.toLowerCase();
}

const storeJson = (s: Store) => ({
  slug: s.slug,
  name: s.name,
  domain: s.domain,
  plan: s.plan,
  ownerEmail: s.ownerEmail,
  settings: s.settings,
});

async function withPlatform<T>(dataDir: string, fn: (platform: Platform) => Promise<T>): Promise<T> {
  const platform = await Platform.open(dataDir);
  try {
    return await fn(platform);
  } finally {
    await platform.close();
  }
}

async function add(argv: string[]) {
  const { values, positionals: args } = parseCommand(argv, {
    domain: { type: "string" },
    plan: { type: "string" },
    "owner-email": { type: "string" },
    name: { type: "string" },
  });
  const [slug] = positionals(args, ["SLUG"], USAGE_ADD);
  if (!SLUG_PATTERN.test(slug)) throw new UsageError(`SLUG "${slug}" must be lower-case letters, digits and inner hyphens`);
  for (const flag of ["domain", "plan", "owner-email"] as const) {
    if (values[flag] === undefined) throw new UsageError(`missing --${flag}; usage: ${USAGE_ADD}`);
  }
  const store: NewStore = {
    slug,
    name: values.name ?? slug,
    domain: checkDomain(values.domain) as string,
    plan: checkPlan(values.plan) as Plan,
    ownerEmail: values["owner-email"] as string,
    settings: { manualCustomerApproval: false, notifyStatusChange: true, registration: true },
  };
  const dataDir = dataDirOf(values);
  await withPlatform(dataDir, async (platform) => {
    if (await platform.getStore(slug)) throw new CliError(`store "${slug}" already exists`);
    if (await platform.domainTaken(store.domain)) throw new CliError(`domain "${store.domain}" already belongs to another store`);
    const pool = new StorePool(dataDir);
    await pool.use(slug, async () => {}); // creates and migrates stores/{slug}.db
    await pool.close();
    await platform.addStore(store);
  });
  if (values.json) printJson(storeJson({ ...store, keysVersion: 0, mailVersion: 0, createdAt: Date.now() }));
  else console.log(`created store ${slug} at https://${store.domain}/api/v1 (plan ${store.plan})`);
}

async function set(argv: string[]) {
  const { values, positionals: args } = parseCommand(argv, {
    plan: { type: "string" },
    domain: { type: "string" },
    "manual-approval": { type: "string" },
    "notify-status": { type: "string" },
    registration: { type: "string" },
    name: { type: "string" },
    "owner-email": { type: "string" },
  });
  const [slug] = positionals(args, ["SLUG"], USAGE_SET);
  const plan = checkPlan(values.plan);
  const domain = checkDomain(values.domain);
  const manual = onOff(values["manual-approval"], "manual-approval");
  const notify = onOff(values["notify-status"], "notify-status");
  const registration = onOff(values.registration, "registration");
  const updated = await withPlatform(existingDataDirOf(values), async (platform) => {
    const store = await platform.getStore(slug);
    if (!store) throw new CliError(`no store "${slug}"`);
    if (domain && (await platform.domainTaken(domain, slug))) throw new CliError(`domain "${domain}" already belongs to another store`);
    const next: Store = {
      ...store,
      name: values.name ?? store.name,
      ownerEmail: values["owner-email"] ?? store.ownerEmail,
      plan: plan ?? store.plan,
      domain: domain ?? store.domain,
      settings: {
        manualCustomerApproval: manual ?? store.settings.manualCustomerApproval,
        notifyStatusChange: notify ?? store.settings.notifyStatusChange,
        registration: registration ?? store.settings.registration,
      },
    };
    await platform.updateStore(slug, next);
    return next;
  });
  if (values.json) printJson(storeJson(updated));
  else console.log(`updated store ${slug}`);
}

async function list(argv: string[]) {
  const { values, positionals: args } = parseCommand(argv, {});
  positionals(args, [], "storeapi stores list");
  const stores = await withPlatform(existingDataDirOf(values), (platform) => platform.listStores());
  if (values.json) return printJson(stores.map(storeJson));
  if (stores.length === 0) return console.log("no stores");
  for (const s of stores) console.log(`${s.slug.padEnd(20)} ${s.domain.padEnd(32)} ${s.plan}`);
}

export const storesCommand = (argv: string[]) => runSubcommand("stores", argv, { add, set, list });
