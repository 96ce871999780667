import * as v from "valibot";
import type { Platform, Store } from "../../db/platform";
import { ApiError } from "../../errors";
import { formatIsrael } from "../../format/time";
import { bool, dateTimeOut, idOut, idParam, nameText, positiveInteger } from "../../http/schemas";
import type { StoreRegistry } from "../../registry";
import type { OrderStatus } from "../../stores/order-statuses";
import {
  DEFAULT_ORDER_STATUSES,
  domainSchema,
  domainUnderPlatform,
  ownerEmailSchema,
  planSchema,
  slugSchema,
  storeNameSchema,
} from "../../stores/rules";

/** A `{slug}` path parameter (with an example for tools that call the API from its document). */
export const slugParam = v.pipe(slugSchema, v.examples(["shop1"]));
export const slugParams = v.strictObject({ slug: slugParam });
/** `{slug}` and the `{id}` of a record in that store (a key, a customer). */
export const slugIdParams = v.strictObject({ slug: slugParam, id: idParam() });

export const settingsBody = v.strictObject({
  manualCustomerApproval: v.optional(bool()),
  notifyStatusChange: v.optional(bool()),
  registration: v.optional(bool()),
});

const statusIdsUnique = (statuses: Array<{ id: number; name: string }>) =>
  new Set(statuses.map((s) => s.id)).size === statuses.length;

export const orderStatusesBody = v.pipe(
  v.array(
    v.strictObject({ id: positiveInteger(), name: nameText(100) }),
    "must be an array of { id, name }.",
  ),
  v.minLength(1, "must list at least one status."),
  v.maxLength(100, "must list at most 100 statuses."),
  v.check(statusIdsUnique, "must not list an id twice."),
);

export const createStoreBody = v.strictObject({
  slug: slugSchema,
  name: storeNameSchema,
  domain: domainSchema,
  plan: planSchema,
  ownerEmail: ownerEmailSchema,
  settings: v.optional(settingsBody, {}),
  orderStatuses: v.optional(orderStatusesBody, DEFAULT_ORDER_STATUSES),
});

export const updateStoreBody = v.strictObject({
  name: v.optional(storeNameSchema),
  domain: v.optional(domainSchema),
  plan: v.optional(planSchema),
  ownerEmail: v.optional(ownerEmailSchema),
  settings: v.optional(settingsBody),
  orderStatuses: v.optional(orderStatusesBody),
});

/** An order status in answers. */
export const orderStatusOut = v.object({ id: idOut(), name: v.string() });

export const storeOut = v.object({
  slug: v.string(),
  name: v.string(),
  domain: v.string(),
  alternativeDomain: v.string(),
  plan: planSchema,
  ownerEmail: v.string(),
  settings: v.object({
    manualCustomerApproval: v.boolean(),
    notifyStatusChange: v.boolean(),
    registration: v.boolean(),
  }),
  orderStatuses: v.array(orderStatusOut),
  createdAt: dateTimeOut(),
});

export const toStoreJson = (
  store: Store,
  platformDomain: string,
  orderStatuses: OrderStatus[],
) => ({
  slug: store.slug,
  name: store.name,
  domain: store.domain,
  alternativeDomain: `${store.slug}.${platformDomain}`,
  plan: store.plan,
  ownerEmail: store.ownerEmail,
  settings: store.settings,
  orderStatuses: orderStatuses.map((s) => ({ id: s.id, name: s.name })),
  createdAt: formatIsrael(store.createdAt),
});

/**
 * 409 `domain_taken` for a domain another store uses, as the registry or (newer, when the
 * CLI changed it a moment ago) platform.db has it, or under the platform domain (that is
 * where every store's alternative address lives).
 */
export async function refuseTakenDomain(
  registry: StoreRegistry,
  platform: Platform,
  domain: string,
  slug: string,
): Promise<void> {
  const owner = registry.resolveHost(domain);
  if (
    domainUnderPlatform(domain, registry.platformDomain) ||
    (owner && owner.slug !== slug) ||
    (await platform.domainTaken(domain, slug))
  )
    throw domainTaken(domain);
}

export const domainTaken = (domain: string) =>
  new ApiError(
    "domain_taken",
    `The domain "${domain}" is already used by another store or is under the platform domain.`,
    {
      field: "domain",
    },
  );
