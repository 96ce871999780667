import type { ErrorCode } from "../errors";
import { docsPage } from "../openapi/docs-page";
import {
  buildOpenApi,
  type DocumentedRoute,
  type DocumentSpec,
  documentOperations,
  serviceOperation,
} from "../openapi/document";
import { MANAGE_PREFIX } from "./define";
import { manageRoutes } from "./routes";

/** The management API's OpenAPI document (management-api.md §2), built from the routes that validate. */

const OVERVIEW = `
The host's management API: provision stores, manage their API keys, feed in orders and
leads from checkout and storefront forms. It answers on **any host**, under \`/manage/v1\`.

**Keys.** Send a host key on every call, as \`Authorization: Bearer svc_hk_…\` or
\`X-Api-Key: svc_hk_…\`, never in the URL (\`?apikey=\` is 400 \`key_in_url\`). Host keys are made
on the server with \`storeapi host-keys create\`; a host key may call every endpoint here and is
never valid on the store API (nor a store's key here). Bad keys count towards the same per-address
lockout as the store API's (429 \`too_many_failures\`).

**Envelope.** The store API's: \`{"ok": true, "data": …}\`, lists add \`hasMore\` and \`nextCursor\`,
errors are \`{"ok": false, "error": {"code", "message", "field"?, "validIds"?}}\`. Every answer
carries \`X-Request-Id\`.

**Rate limit.** Per host key per clock minute (\`--manage-rate-limit\`, default 600); answers to
authenticated requests carry \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`;
over the limit is 429 \`rate_limited\` with \`Retry-After\`.

**Lists.** \`GET /stores\` is newest first, \`limit\` 1..100 (default 50), \`cursor\` from
\`nextCursor\` passed back unchanged. A store's keys are one unpaginated list, active first.

**Formats.** As the store API's: date-times come out in Israel time, ids are positive integers, a
lookup of an unknown slug or id is 404.

**Idempotency.** \`POST /stores\`, \`POST …/keys\`, \`POST …/orders\` and \`POST …/leads\` accept
\`Idempotency-Key\`, scoped to the host key: a retry within 24 hours returns the first answer with
\`Idempotent-Replayed: true\`; the same key for a different request (another body, path or store)
is 400 \`invalid_parameter\`.

**Not supported.** CORS; \`OPTIONS\` and other methods on a known path are 405 with \`Allow\`.
\`HEAD\` is answered as \`GET\` without the body; it is not listed per operation.
`.trim();

const TAGS = [
  {
    name: "Stores",
    description: "Create, read, change and delete stores; replace a store's order statuses.",
  },
  {
    name: "Keys",
    description:
      "A store's API keys: list, create, delete, roll with a grace period. Every change emails the owner.",
  },
  {
    name: "Ingestion",
    description:
      "What the store API cannot create: orders from checkout, leads from storefront forms, customer sign-ins.",
  },
  {
    name: "Admin links",
    description: "One-time sign-in links to the store admin's API keys screen.",
  },
  { name: "Service", description: "This document and its reference page: no key." },
];

/** `/stores/:slug/keys/:id/roll` → Keys; a store's own paths and the store list → Stores. */
function tagOf(route: DocumentedRoute): string {
  const area = route.path.split("/")[3];
  if (area === "keys") return "Keys";
  if (area === "admin-links") return "Admin links";
  if (area === "orders" || area === "leads" || area === "customers") return "Ingestion";
  return "Stores";
}

const SECURITY_SCHEMES = {
  bearerAuth: {
    type: "http",
    scheme: "bearer",
    description: "`Authorization: Bearer svc_hk_…`: a host key.",
  },
  apiKeyHeader: {
    type: "apiKey",
    in: "header",
    name: "X-Api-Key",
    description: "`X-Api-Key: svc_hk_…`: the same host key, in its own header.",
  },
};

const ERROR_CODES: ErrorCode[] = [
  "key_in_url",
  "https_required",
  "not_found",
  "method_not_allowed",
  "too_many_failures",
  "unauthorized",
  "rate_limited",
  "json_required",
  "payload_too_large",
  "invalid_json",
  "invalid_parameter",
  "invalid_field",
  "nothing_to_update",
  "plan_limit",
  "slug_taken",
  "domain_taken",
  "status_in_use",
  "number_taken",
  "customer_locked",
  "key_inactive",
  "server_error",
  "service_unavailable",
  "store_unavailable",
];

/** Codes every management endpoint can answer, in the order of its checks. */
const COMMON_ERRORS: ErrorCode[] = [
  "key_in_url",
  "https_required",
  "not_found",
  "too_many_failures",
  "unauthorized",
  "rate_limited",
  "invalid_parameter",
  "server_error",
  "store_unavailable",
];

/** The document and its page: no key, before every other check but `key_in_url`. */
const serviceOperations = () =>
  documentOperations(
    MANAGE_PREFIX,
    serviceOperation,
    "Any host, no key, plain HTTP allowed. Not an envelope.",
  );

export const MANAGE_API_SPEC: DocumentSpec = {
  prefix: MANAGE_PREFIX,
  info: { title: "Store Management API: management API", version: "1.0.0", description: OVERVIEW },
  servers: [
    {
      url: "{scheme}://{host}",
      description:
        "The storeapi server: any host name it is reached at. Plain `http` only where the operator allows it.",
      variables: {
        scheme: { enum: ["https", "http"], default: "https" },
        host: { default: "storeapi.example" },
      },
    },
  ],
  tags: TAGS,
  tagOf,
  securitySchemes: SECURITY_SCHEMES,
  keyNote: "Needs a host key (`svc_hk_…`); every host key may call every endpoint.",
  security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
  errorCodes: ERROR_CODES,
  commonErrors: COMMON_ERRORS,
  get extraGets() {
    return serviceOperations();
  },
};

let document: unknown;
let documentText: string | undefined;
let page: string | undefined;

/** Built on first use and kept: served on every request of its path. */
export function manageOpenApiDocument(): unknown {
  document ??= buildOpenApi(manageRoutes, MANAGE_API_SPEC).document;
  return document;
}

export function manageOpenApiText(): string {
  documentText ??= JSON.stringify(manageOpenApiDocument());
  return documentText;
}

export function manageDocsHtml(): string {
  page ??= docsPage(manageOpenApiDocument(), {
    anyHost: true,
    title: "Store Management API: management API reference",
  });
  return page;
}
