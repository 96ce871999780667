import type { JsonSchema } from "@valibot/to-json-schema";
import { ERROR_STATUS, type ErrorCode, MANAGE_ONLY_CODES } from "../errors";
import { ERROR_CATALOG } from "./error-catalog";

/** The fixed pieces of the document: headers, envelopes, security, the overview text. */

export type Json = Record<string, unknown>;

const REQUEST_ID_PATTERN = "^[A-Za-z0-9._:-]{1,128}$";

const HEADERS: Record<string, { description: string; schema: JsonSchema }> = {
  "X-Request-Id": {
    description:
      "The request's id: the one the client sent (1..128 of `[A-Za-z0-9._:-]`), else a generated one. Quote it when reporting a problem.",
    schema: { type: "string", pattern: REQUEST_ID_PATTERN },
  },
  "RateLimit-Limit": {
    description: "Requests this key may make per clock minute (UTC).",
    schema: { type: "integer", minimum: 1, examples: [120] },
  },
  "RateLimit-Remaining": {
    description: "Requests this key has left in the current minute.",
    schema: { type: "integer", minimum: 0 },
  },
  "RateLimit-Reset": {
    description: "Seconds until the next minute starts and the count resets.",
    schema: { type: "integer", minimum: 1, maximum: 60 },
  },
  "Retry-After": {
    description: "Seconds to wait before trying again.",
    schema: { type: "integer", minimum: 1 },
  },
  Allow: {
    description: "The methods this path accepts.",
    schema: { type: "string", examples: ["GET, PATCH"] },
  },
  "Idempotent-Replayed": {
    description:
      "`true` when this is the stored answer to an earlier request with the same Idempotency-Key.",
    schema: { type: "string", enum: ["true"] },
  },
};

export type HeaderName = keyof typeof HEADERS;

export const header = (name: HeaderName, required: boolean) => ({ ...HEADERS[name], required });

export const RATE_HEADERS: HeaderName[] = [
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
];

export const PARAMETERS = {
  RequestId: {
    name: "X-Request-Id",
    in: "header",
    required: false,
    description:
      "Your own id for this request (1..128 of `[A-Za-z0-9._:-]`); echoed back, else one is generated.",
    schema: { type: "string", pattern: REQUEST_ID_PATTERN },
  },
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "Makes a retry safe: the same key with the same request within 24 hours returns the first answer (with `Idempotent-Replayed: true`) and creates nothing. The same key with a different request is 400 `invalid_parameter`.",
    schema: { type: "string", pattern: "^[\\x21-\\x7E]{1,255}$" },
  },
};

export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: "http",
    scheme: "bearer",
    description: "`Authorization: Bearer svc_sk_…`: an API key of the store whose host you call.",
  },
  apiKeyHeader: {
    type: "apiKey",
    in: "header",
    name: "X-Api-Key",
    description: "`X-Api-Key: svc_sk_…`: the same key, in its own header.",
  },
};

/**
 * Bearer or X-Api-Key. The permission an endpoint needs is in its description and in
 * `x-permission`, not in these arrays: linters read them as OAuth scopes and warn.
 */
export const KEY_SECURITY = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/** The codes the store API answers (the management API's own conflicts are not among them). */
export const STORE_ERROR_CODES = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter(
  (code) => !MANAGE_ONLY_CODES.includes(code),
);

/** Not `Error`: generated types of that name shadow the language's own. */
export const ERROR_SCHEMA_NAME = "ApiError";

/** The envelope of every error answer, its `code` one of `codes`. */
export const errorEnvelope = (codes: ErrorCode[]): JsonSchema => ({
  type: "object",
  description: "Every error answer.",
  required: ["ok", "error"],
  additionalProperties: false,
  properties: {
    ok: { type: "boolean", const: false },
    error: {
      type: "object",
      required: ["code", "message"],
      additionalProperties: false,
      properties: {
        code: { type: "string", enum: codes },
        message: { type: "string", description: "One English sentence saying what to fix." },
        field: { type: "string", description: "The offending body field, parameter or header." },
        validIds: {
          type: "array",
          items: { type: "integer" },
          description:
            "With `invalid_field` on an order's `status`: the store's status ids, ascending.",
        },
      },
    },
  },
});

/** The error envelope narrowed to the codes one answer can carry. */
export const errorSchema = (codes: ErrorCode[]): JsonSchema => ({
  allOf: [
    { $ref: `#/components/schemas/${ERROR_SCHEMA_NAME}` },
    { properties: { error: { properties: { code: { enum: codes } } } } },
  ],
});

/** An example answer per code; `messages` gives an operation's own where they differ (its body limit). */
export const errorExamples = (
  codes: ErrorCode[],
  messages: Partial<Record<ErrorCode, string>> = {},
) =>
  Object.fromEntries(
    codes.map((code) => [
      code,
      {
        summary: code,
        value: {
          ok: false,
          error: {
            code,
            message: messages[code] ?? ERROR_CATALOG[code].example,
            ...(ERROR_CATALOG[code].field && { field: ERROR_CATALOG[code].field }),
          },
        },
      },
    ]),
  );

export const successEnvelope = (data: JsonSchema): JsonSchema => ({
  type: "object",
  required: ["ok", "data"],
  additionalProperties: false,
  properties: { ok: { type: "boolean", const: true }, data },
});

export const listEnvelope = (item: JsonSchema): JsonSchema => ({
  type: "object",
  required: ["ok", "data", "hasMore", "nextCursor"],
  additionalProperties: false,
  properties: {
    ok: { type: "boolean", const: true },
    data: { type: "array", items: item },
    hasMore: { type: "boolean", description: "Whether another page follows." },
    nextCursor: {
      type: ["string", "null"],
      description:
        "Pass as `cursor` to get the next page, unchanged; `null` exactly when `hasMore` is false.",
    },
  },
});

export const TAGS = [
  {
    name: "Orders",
    description:
      "Orders come from checkout; the API reads them and updates status, payment, tracking and notes.",
  },
  {
    name: "Customers",
    description: "The store's customers: list, read, create and update (activate, lock).",
  },
  {
    name: "Products",
    description: "The catalogue: list, read, create, update, and update up to 500 at once.",
  },
  {
    name: "Leads",
    description: "Contact-form leads from the storefront: list, read, mark handled.",
  },
  {
    name: "Service",
    description: "Health check, this document and its reference page: any host, no key.",
  },
];

/** Variables carry no `description`: the 3.1 schema of the validator misspells it (`descriptions`). */
export const SERVERS = [
  {
    url: "{scheme}://{store}",
    description:
      "Your store's host (replace `your-store.example`): its own domain, or `{slug}.{platform domain}` (with a port if not the default); the host picks the store. Plain `http` only where the operator allows it.",
    variables: {
      scheme: { enum: ["https", "http"], default: "https" },
      store: { default: "your-store.example" },
    },
  },
];

export const OVERVIEW = `
The Store Management API: one server, many stores. **The Host header picks the store**
(its own domain, or \`{slug}.{platform domain}\`); an unknown host is 404.

**Keys.** Send an API key on every call, as \`Authorization: Bearer svc_sk_…\` or
\`X-Api-Key: svc_sk_…\`, never in the URL (\`?apikey=\` is 400 \`key_in_url\`). A key
belongs to one store and has per-area permissions (\`products\`, \`orders\`, \`customers\`,
\`leads\`): \`{area}:read\` for GET, \`{area}:write\` for POST and PATCH. The API is included
in the \`growth\` plan and above. 20 bad keys from one address within 10 minutes block it for
10 minutes (429 \`too_many_failures\`; the count is configurable).

**Envelope.** Every answer is JSON (\`application/json; charset=utf-8\`): \`{"ok": true, "data": …}\`,
lists add \`hasMore\` and \`nextCursor\`, errors are \`{"ok": false, "error": {"code", "message", "field"?, "validIds"?}}\`.
Every answer carries \`X-Request-Id\`.

**Rate limit.** 120 requests per clock minute per key (configurable); every answer to an
authenticated request carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`;
over the limit is 429 \`rate_limited\` with \`Retry-After\`.

**Lists.** Newest first, \`limit\` 1..100 (default 50), \`cursor\` from \`nextCursor\` passed back
unchanged and bound to its list and filters. Unknown query parameters are 400 \`invalid_parameter\`.

**Formats.** Money is a JSON number with at most 2 decimals. Date-times come out as
\`YYYY-MM-DDThh:mm:ss+hh:mm\` in Israel time and go in as ISO 8601 with an offset or \`Z\`, or a
bare date meaning 00:00 Israel time. Ids are positive integers. Strings are stored as sent;
lengths count characters (code points).

**Idempotency.** \`POST /customers\` and \`POST /products\` accept \`Idempotency-Key\`: a retry
within 24 hours returns the first answer with \`Idempotent-Replayed: true\`.

**Not supported.** CORS (no \`Access-Control-*\` headers); \`OPTIONS\` and other methods on a
known path are 405 with \`Allow\`. \`HEAD\` is answered as \`GET\` without the body
(counted by the rate limit as a \`GET\`); it is not listed per operation.
`.trim();
