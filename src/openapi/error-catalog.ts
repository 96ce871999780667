import { ERROR_STATUS, type ErrorCode, FIXED_MESSAGES, tooLargeMessage } from "../errors";
import { MAX_BODY_BYTES } from "../http/json-body";
import type { DocumentedRoute } from "./document";

interface ErrorInfo {
  /** When the code is answered (shown in the document). */
  when: string;
  /** An example message. */
  example: string;
  /** The `field` the example answer names, for codes whose answers name one. */
  field?: string;
  /** Whether the answer carries the RateLimit headers: always, never, or depending on the cause. */
  rateHeaders: "always" | "never" | "sometimes";
}

/** Every error code of the API: when it happens, as api-contract.md §2 orders the checks. */
export const ERROR_CATALOG: Record<ErrorCode, ErrorInfo> = {
  key_in_url: {
    when: "An `apikey` query parameter was sent (on any path, checked first).",
    example: FIXED_MESSAGES.key_in_url,
    rateHeaders: "never",
  },
  https_required: {
    when: "The request came over plain HTTP and the server requires HTTPS.",
    example: FIXED_MESSAGES.https_required,
    rateHeaders: "never",
  },
  not_found: {
    when: "The host is not a store, the path is not an endpoint, or the id is not a row of this store.",
    example: "Order 42 was not found.",
    rateHeaders: "sometimes",
  },
  method_not_allowed: {
    when: "The path exists but not with this method (OPTIONS included); `Allow` lists the methods.",
    example: "This path accepts only GET, HEAD, PATCH.",
    rateHeaders: "sometimes",
  },
  too_many_failures: {
    when: "This client IP sent too many bad keys and is blocked for a while; `Retry-After` says how long.",
    example:
      "Too many requests with invalid API keys came from this address; try again in 540 seconds.",
    rateHeaders: "never",
  },
  unauthorized: {
    when: "The API key is missing, malformed, unknown, deleted, expired or of another store (one body for all).",
    example: FIXED_MESSAGES.unauthorized,
    rateHeaders: "never",
  },
  plan_required: {
    when: "The store's plan does not include the API (it does from `growth` up).",
    example: `The API is not included in the store's "starter" plan; upgrade to growth or higher.`,
    rateHeaders: "never",
  },
  rate_limited: {
    when: "The key used up its requests for this clock minute; `Retry-After` says when the next minute starts.",
    example: "This key has used its 120 requests for this minute; retry in 17 seconds.",
    rateHeaders: "always",
  },
  insufficient_scope: {
    when: "The key lacks the permission the endpoint needs (`{area}:read` for GET, `{area}:write` for POST/PATCH).",
    example: 'This key lacks the "orders:write" permission this endpoint needs.',
    rateHeaders: "always",
  },
  json_required: {
    when: "The body was not sent as `application/json`.",
    example: FIXED_MESSAGES.json_required,
    rateHeaders: "always",
  },
  payload_too_large: {
    when: "The body is larger than the operation takes (its example names the limit).",
    example: tooLargeMessage(MAX_BODY_BYTES),
    rateHeaders: "always",
  },
  invalid_json: {
    when: "The body is not parsable JSON.",
    example: FIXED_MESSAGES.invalid_json,
    rateHeaders: "always",
  },
  invalid_parameter: {
    when: "A path or query parameter (or the Idempotency-Key header) is wrong or unknown; `field` names it.",
    example: 'Parameter "limit" must be a whole number from 1 to 100.',
    field: "limit",
    rateHeaders: "always",
  },
  invalid_field: {
    when: "A body field is wrong, unknown, of the wrong type or too long, or the body is not an object; `field` names it.",
    example: 'Field "email" must be a valid email address.',
    field: "email",
    rateHeaders: "always",
  },
  nothing_to_update: {
    when: "The PATCH body changes nothing (empty, or only `notifyCustomer`).",
    example: FIXED_MESSAGES.nothing_to_update,
    rateHeaders: "always",
  },
  email_taken: {
    when: "Another customer of this store has this email (compared case-insensitively).",
    example: FIXED_MESSAGES.email_taken,
    field: "email",
    rateHeaders: "always",
  },
  plan_limit: {
    when: "The store is at a limit of its plan (products per store, active API keys).",
    example: "The growth plan allows at most 5,000 products; upgrade the store's plan to add more.",
    rateHeaders: "always",
  },
  registration_disabled: {
    when: "The store's customer registration setting is off.",
    example: FIXED_MESSAGES.registration_disabled,
    rateHeaders: "always",
  },
  // The management API's own conflicts (management-api.md §2).
  slug_taken: {
    when: "Management API: another store already has this slug.",
    example: 'A store with slug "shop1" already exists; choose another slug.',
    field: "slug",
    rateHeaders: "always",
  },
  domain_taken: {
    when: "Management API: another store uses this domain, or it is under the platform domain.",
    example:
      'The domain "shop1.example.com" is already used by another store or is under the platform domain.',
    field: "domain",
    rateHeaders: "always",
  },
  status_in_use: {
    when: "Management API: orders still use a status id the new set removes; the message names the ids.",
    example: "Orders still use status ids 4, 5; keep them in the set.",
    rateHeaders: "always",
  },
  number_taken: {
    when: "Management API: the store already has an order with this number.",
    example: "The store already has an order number 1001.",
    field: "number",
    rateHeaders: "always",
  },
  customer_locked: {
    when: "Management API: the customer is locked and cannot sign in.",
    example: "Customer 42 is locked; unlock them before recording a sign-in.",
    rateHeaders: "always",
  },
  key_inactive: {
    when: "Management API: the key to roll is deleted or expired.",
    example: "Key 7 is deleted or expired; only an active key can be rolled.",
    rateHeaders: "always",
  },
  server_error: {
    when: "Something unexpected failed on the server; it is logged with the request id.",
    example: FIXED_MESSAGES.server_error,
    rateHeaders: "sometimes",
  },
  service_unavailable: {
    when: "The service cannot do this now; the message says why. `GET /healthz`: the platform database cannot be read or was replaced under the server, the data directory is not writable, or the process is out of file descriptors. Creating or deleting a store (management API): another storeapi command, such as a load, kept changing the stores for 8 s (retry), or this server on a libSQL server has no admin API to create namespaces with. A request with a body: the server is reading too many request bodies at once (256 MiB in all, 16 MiB from one key); `Retry-After: 1`.",
    example: "Unhealthy: the data directory is not writable.",
    rateHeaders: "sometimes",
  },
  store_unavailable: {
    when: "The store's database cannot be used now: its file is missing or damaged on the server, its disk is full (a write), or the libSQL server holding it does not answer in time; the operator is told in the log. Retry later (a create with the same Idempotency-Key).",
    example: FIXED_MESSAGES.store_unavailable,
    // The store API looks keys up in the store's own database, before its rate limit; the
    // management API counts the host key first.
    rateHeaders: "sometimes",
  },
};

const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_STATUS, code);

/** Codes every authenticated endpoint of the store API can answer, in check order. */
export const AUTHENTICATED: ErrorCode[] = [
  "key_in_url",
  "https_required",
  "not_found",
  "too_many_failures",
  "unauthorized",
  "plan_required",
  "rate_limited",
  "insufficient_scope",
  "invalid_parameter",
  "server_error",
  "store_unavailable",
];

const WITH_BODY: ErrorCode[] = [
  "json_required",
  "payload_too_large",
  "invalid_json",
  "invalid_field",
  "service_unavailable",
];

/** The error codes one endpoint can answer: the `common` ones, its method's, and its own. */
export function routeErrorCodes(
  route: DocumentedRoute,
  common: ErrorCode[],
): { codes: ErrorCode[]; unknown: string[] } {
  const codes = new Set<ErrorCode>(common);
  if (route.method !== "GET" && route.method !== "DELETE")
    for (const code of WITH_BODY) codes.add(code);
  if (route.method === "PATCH") codes.add("nothing_to_update");
  const unknown: string[] = [];
  for (const code of route.errors ?? []) {
    if (isErrorCode(code)) codes.add(code);
    else unknown.push(code);
  }
  return { codes: [...codes], unknown };
}

/** Codes grouped by HTTP status, statuses ascending. */
export function byStatus(codes: ErrorCode[]): Array<[number, ErrorCode[]]> {
  const groups = new Map<number, ErrorCode[]>();
  for (const code of codes)
    groups.set(ERROR_STATUS[code], [...(groups.get(ERROR_STATUS[code]) ?? []), code]);
  return [...groups].sort(([a], [b]) => a - b);
}
