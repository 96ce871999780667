import type { JsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { type ErrorCode, tooLargeMessage } from "../errors";
import { MAX_BODY_BYTES } from "../http/json-body";
import { API_PREFIX, accessFor, type Method, type RouteDef } from "../routes/define";
import { SchemaConverter } from "./convert";
import { AUTHENTICATED, byStatus, ERROR_CATALOG, routeErrorCodes } from "./error-catalog";
import {
  ERROR_SCHEMA_NAME,
  errorEnvelope,
  errorExamples,
  errorSchema,
  header,
  type Json,
  KEY_SECURITY,
  listEnvelope,
  OVERVIEW,
  PARAMETERS,
  RATE_HEADERS,
  SECURITY_SCHEMES,
  SERVERS,
  STORE_ERROR_CODES,
  successEnvelope,
  TAGS,
} from "./parts";

export interface OpenApiBuild {
  document: Json;
  /** Parts of the routes the document could not describe (kept empty by a test). */
  problems: string[];
}

type Schema = v.GenericSchema;
type Operation = Json;

/** What the document reads of a route: the store API's (RouteDef) and the management API's alike. */
export type DocumentedRoute = Omit<RouteDef, "method" | "area" | "handler"> & {
  method: Method | "PUT" | "DELETE";
  /** The permission area a key needs; absent where any key of the API may call it. */
  area?: RouteDef["area"];
  /** The success status, when not the default (201 for a POST on a collection, else 200). */
  status?: 200 | 201;
  /** The request may come with no body at all. */
  bodyOptional?: boolean;
};

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** `/orders/:id` → `/orders/{id}`. */
const templatePath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

/** `/orders/:id` → `/api/v1/orders/{id}` (routes mounted at `prefix`). */
export const openApiPath = (path: string, prefix = API_PREFIX) => `${prefix}${templatePath(path)}`;

/** `PATCH`, `/orders/{id}` (relative to the prefix) → `patchOrdersById`; unique for a method and path. */
function operationId(method: string, path: string): string {
  const words = path
    .split(/[/.]/)
    .filter(Boolean)
    .map((part) =>
      part.startsWith("{") ? `By${capitalize(part.slice(1, -1))}` : capitalize(part),
    );
  return method.toLowerCase() + words.join("").replace(/[^A-Za-z0-9]/g, "");
}

/** Creates (POST on a collection) answer 201; everything else 200. */
const successStatus = (route: DocumentedRoute) =>
  route.status ?? (route.method === "POST" && /^\/[^/]+$/.test(route.path) ? 201 : 200);

/** A `title` given with `v.title()` or `v.metadata({ title })` in the schema's pipe. */
function schemaTitle(schema: Schema): string | undefined {
  if (!("pipe" in schema) || !Array.isArray(schema.pipe)) return undefined;
  for (const item of schema.pipe as Array<Record<string, unknown>>) {
    if (item.type === "title" && typeof item.title === "string") return item.title;
    const metadata = item.metadata as Record<string, unknown> | undefined;
    if (item.type === "metadata" && typeof metadata?.title === "string") return metadata.title;
  }
  return undefined;
}

/** The schema of one element of a list answer (`response` may be the array or the element). */
function itemSchema(route: DocumentedRoute): Schema | undefined {
  const response = route.response;
  if (!response || !route.list) return response;
  return response.type === "array" && "item" in response ? (response.item as Schema) : response;
}

/**
 * Names answer shapes so the document shows them once: a schema titled in its pipe, and
 * the answer of `GET /{resources}/:id` (as `Order`, `Customer`, …) wherever it recurs.
 */
function nameSchemas(routes: DocumentedRoute[], converter: SchemaConverter): void {
  for (const route of routes) {
    const item = itemSchema(route);
    const title = item && schemaTitle(item);
    if (item && title) converter.name(item, title);
  }
  for (const route of routes) {
    const single = /^\/([a-z]+)s\/:[a-z]+$/i.exec(route.path);
    if (route.method === "GET" && single && route.response)
      converter.name(route.response, capitalize(single[1]));
  }
}

interface Context {
  converter: SchemaConverter;
  problems: string[];
  spec: DocumentSpec;
}

function objectProperties(schema: JsonSchema): Array<[string, JsonSchema, boolean]> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(schema.required ?? []);
  return Object.entries(properties).map(([name, property]) => [name, property, required.has(name)]);
}

function parameters(route: DocumentedRoute, ctx: Context, where: string): Json[] {
  const result: Json[] = [];
  const pathNames = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  const pathSchema = route.params ? ctx.converter.convert(route.params, `${where} params`) : {};
  const pathProperties = new Map(
    objectProperties(pathSchema).map(([name, schema]) => [name, schema]),
  );
  for (const name of pathNames) {
    const schema = pathProperties.get(name);
    if (!schema) ctx.problems.push(`${where}: path parameter "${name}" has no schema.`);
    // Tools that call the API from the document (Dredd, Prism) need an example of each.
    const example = schema?.examples?.[0];
    result.push({
      name,
      in: "path",
      required: true,
      ...(example === undefined ? {} : { example }),
      schema: schema ?? { type: "string" },
    });
  }
  if (route.query) {
    const querySchema = ctx.converter.convert(route.query, `${where} query`);
    if (querySchema.type !== "object")
      ctx.problems.push(`${where}: the query schema is not an object.`);
    for (const [name, schema, required] of objectProperties(querySchema)) {
      result.push({
        name,
        in: "query",
        required,
        ...(schema.description ? { description: schema.description } : {}),
        schema,
      });
    }
  }
  result.push({ $ref: "#/components/parameters/RequestId" });
  if (route.idempotent) result.push({ $ref: "#/components/parameters/IdempotencyKey" });
  return result;
}

function successResponse(route: DocumentedRoute, ctx: Context, where: string): Json {
  const item = itemSchema(route);
  if (!item) ctx.problems.push(`${where}: no response schema.`);
  const data = item ? ctx.converter.convert(item, `${where} response`, true) : {};
  const headers: Json = { "X-Request-Id": header("X-Request-Id", true) };
  for (const name of RATE_HEADERS) headers[name] = header(name, true);
  if (route.idempotent) headers["Idempotent-Replayed"] = header("Idempotent-Replayed", false);
  return {
    description: route.list ? "One page of the list, newest first." : "Success.",
    headers,
    content: {
      "application/json": { schema: route.list ? listEnvelope(data) : successEnvelope(data) },
    },
  };
}

interface ErrorOptions {
  authenticated: boolean;
  idempotent?: boolean;
  /** The operation's body limit (`payload_too_large`'s example names it). */
  maxBodyBytes?: number;
}

/** One response per error status: the codes it can carry, their causes, headers and examples. */
function errorResponse(status: number, codes: ErrorCode[], options: ErrorOptions): Json {
  const headers: Json = { "X-Request-Id": header("X-Request-Id", true) };
  const rate = codes.map((code) => ERROR_CATALOG[code].rateHeaders);
  if (options.authenticated && rate.some((r) => r !== "never")) {
    for (const name of RATE_HEADERS)
      headers[name] = header(
        name,
        rate.every((r) => r === "always"),
      );
  }
  if (status === 429) headers["Retry-After"] = header("Retry-After", true);
  if (status === 405) headers.Allow = header("Allow", true);
  if (options.idempotent && status >= 400 && status < 500 && status !== 429) {
    headers["Idempotent-Replayed"] = header("Idempotent-Replayed", false);
  }
  return {
    description: codes.map((code) => `- \`${code}\`: ${ERROR_CATALOG[code].when}`).join("\n"),
    headers,
    content: {
      "application/json": {
        schema: errorSchema(codes),
        examples: errorExamples(codes, {
          payload_too_large: tooLargeMessage(options.maxBodyBytes ?? MAX_BODY_BYTES),
        }),
      },
    },
  };
}

function errorResponses(codes: ErrorCode[], options: ErrorOptions): Json {
  return Object.fromEntries(
    byStatus(codes).map(([status, group]) => [
      String(status),
      errorResponse(status, group, options),
    ]),
  );
}

function routeOperation(route: DocumentedRoute, ctx: Context): Operation {
  const where = `${route.method} ${route.path}`;
  const { codes, unknown } = routeErrorCodes(route, ctx.spec.commonErrors);
  for (const code of unknown) ctx.problems.push(`${where}: unknown error code "${code}".`);
  const permission = route.area && `${route.area}:${accessFor(route.method as Method)}`;
  const operation: Operation = {
    operationId: operationId(route.method, templatePath(route.path)),
    tags: [ctx.spec.tagOf(route)],
    summary: route.summary,
    description: permission ? `Needs the \`${permission}\` permission.` : ctx.spec.keyNote,
    security: ctx.spec.security,
    ...(permission ? { "x-permission": permission } : {}),
    parameters: parameters(route, ctx, where),
  };
  if (route.body) {
    const schema = ctx.converter.convert(route.body, `${where} body`);
    // A PATCH must change something: an empty object is 400 `nothing_to_update`.
    if (route.method === "PATCH") schema.minProperties = 1;
    operation.requestBody = {
      required: !route.bodyOptional,
      content: { "application/json": { schema } },
    };
  } else if (route.method !== "GET" && route.method !== "DELETE") {
    ctx.problems.push(`${where}: no body schema.`);
  }
  operation.responses = {
    [String(successStatus(route))]: successResponse(route, ctx, where),
    ...errorResponses(codes, {
      authenticated: true,
      idempotent: route.idempotent,
      maxBodyBytes: route.maxBodyBytes,
    }),
  };
  return operation;
}

/** An operation that needs no key and no store (either API's document, its page, `/healthz`). */
export function serviceOperation(
  id: string,
  summary: string,
  description: string,
  content: Json,
  errors: ErrorCode[] = ["key_in_url"],
): Operation {
  return {
    operationId: id,
    tags: ["Service"],
    summary,
    description,
    security: [],
    parameters: [{ $ref: "#/components/parameters/RequestId" }],
    responses: {
      "200": {
        description: "Success.",
        headers: { "X-Request-Id": header("X-Request-Id", true) },
        content,
      },
      ...errorResponses(errors, { authenticated: false }),
    },
  };
}

/** The answers of the store API that need no key and no store. */
function serviceOperations(): Record<string, Operation> {
  const health = successEnvelope({
    type: "object",
    required: ["status"],
    additionalProperties: false,
    properties: { status: { type: "string", const: "ok" } },
  });
  return {
    "/healthz": serviceOperation(
      "getHealthz",
      "Health check",
      "Any host, no key, plain HTTP allowed; never blocked. 503 when the platform database cannot be read or was replaced under the server, the data directory is not writable, or the process is out of file descriptors (probed in the background every second).",
      { "application/json": { schema: health } },
      ["key_in_url", "service_unavailable"],
    ),
    ...documentOperations(API_PREFIX, serviceOperation, "Any host, no key. Not an envelope."),
  };
}

/** Builds one service operation (no key): id, summary, description, the 200 answer's content. */
type ServiceOperation<T> = (id: string, summary: string, description: string, content: Json) => T;

/** The operations every document has: the document itself, and its reference page. */
export function documentOperations<T>(
  prefix: string,
  operation: ServiceOperation<T>,
  documentDescription: string,
): Record<string, T> {
  return {
    [`${prefix}/openapi.json`]: operation(
      "getOpenApi",
      "This OpenAPI 3.1 document",
      documentDescription,
      {
        "application/json": {
          schema: {
            type: "object",
            required: ["openapi"],
            properties: { openapi: { type: "string" } },
          },
        },
      },
    ),
    [`${prefix}/docs`]: operation(
      "getDocs",
      "API reference page",
      "An HTML page built from this document, with no assets from other hosts.",
      { "text/html": { schema: { type: "string" } } },
    ),
  };
}

/** What a document says beside its routes. */
export interface DocumentSpec {
  /** Where the routes are mounted: `/api/v1`. */
  prefix: string;
  info: { title: string; version: string; description: string };
  servers: Json[];
  tags: Json[];
  /** The tag (one of `tags`) a route is listed under. */
  tagOf: (route: DocumentedRoute) => string;
  securitySchemes: Json;
  /** An operation's description when its route needs no permission area (any key of the API). */
  keyNote?: string;
  /** Every operation's security requirement (either scheme). */
  security: Json[];
  /** The codes of the error envelope: every code this API answers. */
  errorCodes: ErrorCode[];
  /** Codes every route can answer, in check order (a route adds its method's and its own). */
  commonErrors: ErrorCode[];
  /** GET operations outside the route table, by full path (health, this document, its page). */
  extraGets: Record<string, Operation>;
}

/** The store API's document (`/api/v1`). */
export const STORE_API_SPEC: DocumentSpec = {
  prefix: API_PREFIX,
  info: { title: "Store Management API", version: "1.0.0", description: OVERVIEW },
  servers: SERVERS,
  tags: TAGS,
  tagOf: (route) => capitalize(route.area ?? ""),
  securitySchemes: SECURITY_SCHEMES,
  security: KEY_SECURITY,
  errorCodes: STORE_ERROR_CODES,
  commonErrors: AUTHENTICATED,
  get extraGets() {
    return serviceOperations();
  },
};

/** Builds the OpenAPI 3.1 document for a route table mounted at `spec.prefix`. */
export function buildOpenApi(
  routes: DocumentedRoute[],
  spec: DocumentSpec = STORE_API_SPEC,
): OpenApiBuild {
  const converter = new SchemaConverter();
  const ctx: Context = { converter, problems: [], spec };
  nameSchemas(routes, converter);

  const paths: Record<string, Record<string, Operation>> = {};
  for (const [path, operation] of Object.entries(spec.extraGets)) paths[path] = { get: operation };
  for (const route of routes) {
    const path = openApiPath(route.path, spec.prefix);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: routeOperation(route, ctx) };
  }

  const document = {
    openapi: "3.1.0",
    info: spec.info,
    servers: spec.servers,
    security: spec.security,
    tags: spec.tags,
    paths,
    components: {
      schemas: { [ERROR_SCHEMA_NAME]: errorEnvelope(spec.errorCodes), ...converter.components() },
      parameters: PARAMETERS,
      securitySchemes: spec.securitySchemes,
    },
  };
  return { document, problems: [...ctx.problems, ...converter.problems] };
}
