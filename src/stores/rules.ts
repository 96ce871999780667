import * as v from "valibot";
import { email, text } from "../http/schemas";
import { PLANS } from "../plans";

/** The rules of a store's record, shared by the loader, the CLI and the management API. */

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const DOMAIN_PATTERN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

export const slugSchema = v.pipe(
  v.string("must be a string."),
  v.regex(SLUG_PATTERN, "must be 1 to 63 lower-case letters, digits and inner hyphens."),
);

export const storeNameSchema = text(100);

export const ownerEmailSchema = email();

export const planSchema = v.picklist(PLANS, `must be one of ${PLANS.join(", ")}.`);

/** A host name of at least two labels (kept lower-case; compared case-insensitively). */
export const domainSchema = v.pipe(
  v.string("must be a string."),
  v.regex(DOMAIN_PATTERN, "must be a host name like shop.example.com."),
  v.check((domain) => domain.includes("."), "must have at least two labels, like shop.example.com."),
  v.transform((domain) => domain.toLowerCase()),
);

/** Whether `domain` is the platform domain or a name under it (those are the stores' alternative addresses). */
export function domainUnderPlatform(domain: string, platformDomain: string): boolean {
  const name = domain.toLowerCase();
  const platform = platformDomain.toLowerCase();
  return name === platform || name.endsWith(`.${platform}`);
}
