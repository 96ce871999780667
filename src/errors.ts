import { isStorageFailure } from "./db/driver";
import { withoutKeys } from "./keys/secret";

/** Every error code the API answers with, and its HTTP status. */
export const ERROR_STATUS = {
  invalid_field: 400,
  invalid_parameter: 400,
  invalid_json: 400,
  nothing_to_update: 400,
  key_in_url: 400,
  unauthorized: 401,
  https_required: 403,
  insufficient_scope: 403,
  plan_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  email_taken: 409,
  plan_limit: 409,
  registration_disabled: 409,
  slug_taken: 409,
  domain_taken: 409,
  status_in_use: 409,
  number_taken: 409,
  customer_locked: 409,
  key_inactive: 409,
  payload_too_large: 413,
  json_required: 415,
  rate_limited: 429,
  too_many_failures: 429,
  server_error: 500,
  service_unavailable: 503,
  store_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Codes only the management API answers (management-api.md §2); the store API's document leaves them out. */
export const MANAGE_ONLY_CODES: readonly ErrorCode[] = [
  "slug_taken",
  "domain_taken",
  "status_in_use",
  "number_taken",
  "customer_locked",
  "key_inactive",
];

/** Extra members an error body may carry beside `code` and `message`. */
export interface ErrorExtras {
  field?: string;
  validIds?: number[];
}

/** The one error type code throws; `renderError` turns it into the envelope. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extras: ErrorExtras = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

/**
 * The errors whose message never varies, written once: the answers and the OpenAPI
 * document's examples (src/openapi/error-catalog.ts) both take them from here.
 */
export const FIXED_MESSAGES = {
  key_in_url: "Never put an API key in the URL; send it in the Authorization header.",
  https_required: "This API is served over HTTPS only; repeat the request with https://.",
  unauthorized:
    "A valid API key is required: send it as 'Authorization: Bearer <key>' or 'X-Api-Key: <key>'.",
  json_required: "Send the body as JSON with 'Content-Type: application/json'.",
  invalid_json: "The body is not valid JSON; check quotes, commas and brackets.",
  nothing_to_update: "The request changes nothing; send at least one field to update.",
  email_taken:
    'Field "email" is already used by another customer of this store; use a different address.',
  registration_disabled:
    "This store does not accept new customer registrations; the store owner has turned registration off.",
  store_unavailable: "This store is unavailable right now; try again later.",
  server_error: "Something went wrong on our side; try again later.",
} satisfies Partial<Record<ErrorCode, string>>;

/** A body past the operation's limit (`payload_too_large`): the answer and the document's example. */
export const tooLargeMessage = (limit: number) =>
  `The body is larger than ${limit} bytes; send less per request.`;

/** An error whose message is its code's fixed one. */
export const fixedError = (
  code: keyof typeof FIXED_MESSAGES,
  extras: ErrorExtras = {},
  headers: Record<string, string> = {},
) => new ApiError(code, FIXED_MESSAGES[code], extras, headers);

/** At most this many characters of anything a client sent are quoted back in an answer. */
export const ECHO_LIMIT = 100;

/** Half a surrogate pair: not Unicode text, and strict JSON parsers refuse an answer holding one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Client input as an answer quotes it: an API key pasted into it cut to its hint, cut to
 * `limit` characters and "…", so no answer (or log line) grows with it, and half a
 * surrogate pair shown as U+FFFD.
 */
export function echo(text: string, limit = ECHO_LIMIT): string {
  return cut(withoutKeys(text), limit).replace(LONE_SURROGATE, "\uFFFD");
}

function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  // Never split a surrogate pair: half of one is not text.
  const end = /[\uD800-\uDBFF]/.test(text[limit - 1] ?? "") ? limit - 1 : limit;
  return `${text.slice(0, end)}…`;
}

export const notFound = (what = "The requested resource") =>
  new ApiError("not_found", `${what} was not found.`);

export const invalidField = (field: string, message: string) =>
  new ApiError("invalid_field", message, { field: echo(field) });

export const invalidParameter = (field: string, message: string) =>
  new ApiError("invalid_parameter", message, { field: echo(field) });

/**
 * The client hung up before its request was read: nobody is left to answer. It is
 * logged as status 499 (as nginx does), never as a server error.
 */
export class ClientClosed extends Error {}
export const CLIENT_CLOSED_STATUS = 499;

export function errorBody(error: ApiError): string {
  return JSON.stringify({
    ok: false,
    error: { code: error.code, message: error.message, ...error.extras },
  });
}

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/**
 * What any thrown value answers: an `ApiError` itself; storage out of reach or out of
 * space 503 `store_unavailable`; anything else a bare 500.
 */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return fixedError(isStorageFailure(error) ? "store_unavailable" : "server_error");
}

/** Renders any thrown value as the error envelope. */
export function renderError(error: unknown): Response {
  if (error instanceof ClientClosed) return new Response(null, { status: CLIENT_CLOSED_STATUS });
  const apiError = asApiError(error);
  return new Response(errorBody(apiError), {
    status: apiError.status,
    headers: { "Content-Type": JSON_CONTENT_TYPE, ...apiError.headers },
  });
}
