import * as v from "valibot";
import { email, nameText } from "../http/schemas";
import { PLANS } from "../plans";

/**
 * What a store record may hold, wherever it comes from: `stores add/set`, a fixture, the
 * management API. Messages finish a sentence that starts with the field's name or path.
 */

const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// No `i` flag: JSON Schema patterns (the OpenAPI document) have no flags.
const HOST_PATTERN =
  /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** Whether a text is a DNS host name (labels of 1–63 letters, digits, inner hyphens; ≤ 253 in all). */
export const isHostName = (text: string) => HOST_PATTERN.test(text);

export const slugSchema = v.pipe(
  v.string("must be a string."),
  v.maxLength(63, "must be at most 63 characters."),
  v.regex(SLUG_PATTERN, "must be lower-case letters, digits and inner hyphens."),
);

export const storeNameSchema = nameText(100);

/**
 * One address, nothing else: valibot's email pattern has no room for spaces, commas,
 * angle brackets or CR/LF, so a value can never add a recipient or a header.
 */
export const ownerEmailSchema = email();

export const planSchema = v.picklist(PLANS, `must be one of ${PLANS.join(", ")}.`);

/** The last label all digits: `10.0.0.1`, and what URL parsers read as IPv4 (`1.2.3.010`). */
const looksLikeIp = (host: string) => /(^|\.)\d+$/.test(host);

/** A store's own host name, lower-cased: at least two labels, not an IP literal, no trailing dot. */
export const domainSchema = v.pipe(
  v.string("must be a string."),
  v.check((s) => !s.endsWith("."), "must not end with a dot."),
  v.maxLength(253, "must be at most 253 characters."),
  v.check(
    (s) => s.split(".").every((label) => label.length <= 63),
    "must have labels (the parts between dots) of at most 63 characters.",
  ),
  v.regex(HOST_PATTERN, "must be a host name like shop.example.com."),
  v.check((s) => !looksLikeIp(s), "must be a host name, not an IP address."),
  v.check(
    (s) => s.includes("."),
    "must be a host name with at least two labels, like shop.example.com.",
  ),
  v.metadata({
    // What the checks above allow, in one pattern: two or more labels, the last not all digits.
    pattern:
      "^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?=[A-Za-z0-9-]*[A-Za-z-])[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$",
    description:
      "A host name of two or more labels (shop.example.com): not an IP address, not under the platform domain ({slug}.{platform domain} addresses live there), not another store's; kept in lower case.",
  }),
  v.transform((s) => s.toLowerCase()),
);

/** The platform's own domain (`--platform-domain`): a host name, one label allowed (`localhost`). */
export const platformDomainSchema = v.pipe(
  v.string("must be a string."),
  v.regex(HOST_PATTERN, "must be a host name like stores.example.com or localhost."),
  v.check((s) => !looksLikeIp(s), "must be a host name, not an IP address."),
  v.transform((s) => s.toLowerCase()),
);

/**
 * Whether a store's own domain lies under the platform domain, where `{slug}.{platform}`
 * addresses live: such a domain could take over another store's address, so it is refused.
 */
export function domainUnderPlatform(domain: string, platformDomain: string): boolean {
  const name = domain.toLowerCase().replace(/\.$/, "");
  const platform = platformDomain.toLowerCase().replace(/\.$/, "");
  return name === platform || name.endsWith(`.${platform}`);
}

/** The order statuses a new store starts with unless its creator lists its own. */
export const DEFAULT_ORDER_STATUSES = [
  { id: 1, name: "New" },
  { id: 2, name: "Awaiting payment" },
  { id: 3, name: "Processing" },
  { id: 4, name: "Shipped" },
  { id: 5, name: "Delivered" },
  { id: 6, name: "Cancelled" },
];
