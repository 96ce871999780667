import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { ERROR_STATUS } from "../src/errors";
import { MANAGE_PREFIX } from "../src/manage/define";
import { manageOpenApiDocument } from "../src/manage/openapi";
import { openApiDocument } from "../src/openapi";
import type { ApiAnswer, RequestOptions, TestServer } from "./helpers";

/**
 * Checks answers against the OpenAPI documents the server publishes (the same objects
 * `GET /api/v1/openapi.json` and `GET /manage/v1/openapi.json` serve), so a test fails
 * when code and document disagree.
 *
 *   expectDocumented("GET", "/api/v1/orders/5?x=1", answer)   // the path as requested
 *   const request = documentedRequests(server);               // or check every answer
 *   const answer = await request("/api/v1/orders", { key: KEYS.read });
 */

type Json = Record<string, any>;

interface Doc {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json> };
}

/** Component refs point into a schema of their own, so only JSON Schema is ever compiled. */
const COMPONENTS_ID = "https://storeapi.invalid/components.json";
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === "$ref" && typeof inner === "string"
        ? inner.replace("#/components/schemas/", `${COMPONENTS_ID}#/$defs/`)
        : rewriteRefs(inner),
    ]),
  );
}

const CONTROLLED_HEADERS = [
  "ratelimit-limit",
  "ratelimit-remaining",
  "ratelimit-reset",
  "retry-after",
  "allow",
  "idempotent-replayed",
];

function fail(where: string, problem: string, answer: ApiAnswer): never {
  throw new Error(`${where}: ${problem}\nanswer ${answer.status}: ${answer.text.slice(0, 2000)}`);
}

/** The checks for one published document (the store API's, the management API's). */
class DocumentContract {
  private readonly ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictTypes: false,
    allowUnionTypes: true,
    multipleOfPrecision: 9,
  });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Doc) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(doc.components.schemas) as Json });
  }

  /** A compiled validator for a schema of the document, cached by its place in it. */
  validatorAt(place: string, schema: unknown): ValidateFunction {
    let validate = this.compiled.get(place);
    if (!validate) {
      validate = this.ajv.compile(rewriteRefs(schema) as Json);
      this.compiled.set(place, validate);
    }
    return validate;
  }

  /** The documented path template a concrete path belongs to; literal paths win. */
  documentedPath(path: string): string | undefined {
    // As the server reads it: dot segments resolved (clients do that), percent-escapes
    // decoded except an encoded slash.
    const bare = new URL(path.split("?")[0], "http://documented.invalid").pathname
      .split("/")
      .map((segment) => {
        try {
          return decodeURIComponent(segment).replaceAll("/", "%2F");
        } catch {
          return segment;
        }
      })
      .join("/");
    if (this.doc.paths[bare]) return bare;
    return Object.keys(this.doc.paths).find((template) =>
      new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+")}$`).test(bare),
    );
  }

  private checkHeaders(where: string, documented: Record<string, Json>, answer: ApiAnswer): void {
    const names = new Map(Object.keys(documented).map((name) => [name.toLowerCase(), name]));
    for (const [lower, name] of names) {
      const header = documented[name];
      const value = answer.headers.get(lower);
      if (value === null) {
        if (header.required)
          fail(where, `header ${name} is documented as always present but is missing.`, answer);
        continue;
      }
      const typed =
        header.schema?.type === "integer" && /^-?\d+$/.test(value) ? Number(value) : value;
      const validate = this.validatorAt(`${where} header ${name}`, header.schema ?? {});
      if (!validate(typed))
        fail(
          where,
          `header ${name}: ${value} does not match ${this.ajv.errorsText(validate.errors)}.`,
          answer,
        );
    }
    for (const lower of CONTROLLED_HEADERS) {
      if (answer.headers.has(lower) && !names.has(lower))
        fail(where, `header ${lower} is sent but not documented for this answer.`, answer);
    }
  }

  private checkBody(
    where: string,
    content: Record<string, Json> | undefined,
    answer: ApiAnswer,
  ): void {
    if (!content) return;
    const contentType = answer.headers.get("content-type") ?? "";
    const media = Object.keys(content).find((type) => contentType.startsWith(type));
    if (!media)
      fail(
        where,
        `Content-Type "${contentType}" is not one of ${Object.keys(content).join(", ")}.`,
        answer,
      );
    if (media !== "application/json") return;
    if (contentType !== "application/json; charset=utf-8")
      fail(where, `Content-Type must be "application/json; charset=utf-8".`, answer);
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      fail(where, "the body is not JSON.", answer);
    }
    const validate = this.validatorAt(`${where} body`, content[media].schema ?? {});
    if (!validate(body))
      fail(
        where,
        `the body does not match the documented schema: ${this.ajv.errorsText(validate.errors, { separator: "; " })}.`,
        answer,
      );
  }

  /** An answer to a path or method the document does not list: an error envelope whose code fits its status. */
  private checkUndocumented(where: string, answer: ApiAnswer): void {
    const validate = this.validatorAt("undocumented", { $ref: "#/components/schemas/ApiError" });
    if (!validate(answer.json))
      fail(
        where,
        `an undocumented path or method must answer the error envelope: ${this.ajv.errorsText(validate.errors)}.`,
        answer,
      );
    const code = (answer.json as Json).error.code as keyof typeof ERROR_STATUS;
    if (ERROR_STATUS[code] !== answer.status)
      fail(
        where,
        `code ${code} belongs to status ${ERROR_STATUS[code]}, not ${answer.status}.`,
        answer,
      );
    if (!answer.headers.get("x-request-id")) fail(where, "X-Request-Id is missing.", answer);
  }

  expectDocumented(method: string, path: string, answer: ApiAnswer): void {
    const verb = method.toLowerCase();
    if (verb === "head") return;
    const template = this.documentedPath(path);
    const operation = template ? this.doc.paths[template][verb] : undefined;
    const where = `${method.toUpperCase()} ${path}`;
    if (!template || !operation) {
      this.checkUndocumented(where, answer);
      return;
    }
    const response = operation.responses?.[String(answer.status)] as Json | undefined;
    if (!response) {
      fail(
        where,
        `status ${answer.status} is not documented (documented: ${Object.keys(operation.responses ?? {}).join(", ")}).`,
        answer,
      );
    }
    const place = `${verb} ${template} ${answer.status}`;
    this.checkHeaders(place, response.headers ?? {}, answer);
    this.checkBody(place, response.content, answer);
  }
}

const storeApi = new DocumentContract(openApiDocument() as Doc);
const manageApi = new DocumentContract(manageOpenApiDocument() as Doc);

/** Paths under /manage/v1 are the management API's document; every other path the store API's. */
const contractFor = (path: string) =>
  path === MANAGE_PREFIX || path.startsWith(`${MANAGE_PREFIX}/`) ? manageApi : storeApi;

/** A compiled validator for a schema of the store API's document, cached by its place in it. */
export const validatorAt = (place: string, schema: unknown) => storeApi.validatorAt(place, schema);

/** The documented path template a concrete path belongs to (in its API's document); literal paths win. */
export const documentedPath = (path: string) => contractFor(path).documentedPath(path);

/**
 * Throws unless `answer` is what the document promises for `method` on `path` (the
 * concrete path, query allowed): a documented status, its body schema, Content-Type and
 * headers (documented always-present headers present, no undocumented rate/retry/allow/
 * idempotency headers). A path or method the document lacks must answer an error envelope.
 * Paths under /manage/v1 are checked against the management API's document.
 */
export function expectDocumented(method: string, path: string, answer: ApiAnswer): void {
  contractFor(path).expectDocumented(method, path, answer);
}

/** `server.request` that checks every answer with `expectDocumented` before returning it. */
export function documentedRequests(server: TestServer) {
  return async (path: string, options: RequestOptions = {}): Promise<ApiAnswer> => {
    const answer = await server.request(path, options);
    expectDocumented(options.method ?? "GET", path, answer);
    return answer;
  };
}
