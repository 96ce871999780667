import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import Ajv2020 from "ajv/dist/2020";
import { Window } from "happy-dom";
import { ERROR_STATUS, MANAGE_ONLY_CODES } from "../src/errors";
import { openApiDocument } from "../src/openapi";
import { docsPage, HOST_NOTE } from "../src/openapi/docs-page";
import SCRIPT from "../src/openapi/docs-page.browser.js" with { type: "text" };
import { buildOpenApi, openApiPath } from "../src/openapi/document";
import { apiRoutes } from "../src/routes";
import { expectDocumented, validatorAt } from "./contract";

type Json = Record<string, any>;

const doc = openApiDocument() as Json;
const CHECKED_IN = join(import.meta.dir, "..", "docs", "openapi.json");
const METHODS = ["get", "post", "patch", "put", "delete", "options", "head"];

/** Every operation of the document with where it sits. */
function operations(): Array<{ path: string; method: string; op: Json }> {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })),
  );
}

describe("OpenAPI document", () => {
  test("passes the OpenAPI 3.1 validator", async () => {
    const api = await SwaggerParser.validate(structuredClone(doc) as never);
    expect((api as Json).openapi).toBe("3.1.0");
  });

  test("every route of apiRoutes is in it, and nothing else under /api/v1 but the service paths", () => {
    for (const route of apiRoutes) {
      const op = doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op.summary).toBe(route.summary);
    }
    const documented = operations()
      .filter(({ op }) => !op.tags.includes("Service"))
      .map(({ path, method }) => `${method.toUpperCase()} ${path}`)
      .sort();
    expect(documented).toEqual(apiRoutes.map((r) => `${r.method} ${openApiPath(r.path)}`).sort());
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/healthz", "/api/v1/openapi.json", "/api/v1/docs"]),
    );
  });

  test("every part of every route's schemas could be converted", () => {
    expect(buildOpenApi(apiRoutes).problems).toEqual([]);
  });

  test("operation ids are unique and every path template parameter is declared", () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, op } of operations()) {
      const declared = (op.parameters ?? [])
        .filter((p: Json) => p.in === "path")
        .map((p: Json) => p.name);
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      expect(declared.sort(), path).toEqual(inPath.sort());
    }
  });

  test("every schema is valid JSON Schema 2020-12 and compiles", () => {
    const meta = new Ajv2020({ strict: false });
    const schemas: Array<[string, unknown]> = Object.entries(doc.components.schemas);
    for (const { path, method, op } of operations()) {
      for (const p of op.parameters ?? [])
        if (p.schema) schemas.push([`${method} ${path} ${p.name}`, p.schema]);
      const body = op.requestBody?.content?.["application/json"]?.schema;
      if (body) schemas.push([`${method} ${path} body`, body]);
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        for (const [media, content] of Object.entries(
          (response.content ?? {}) as Record<string, Json>,
        )) {
          schemas.push([`${method} ${path} ${status} ${media}`, content.schema]);
        }
      }
    }
    for (const [place, schema] of schemas) {
      expect(meta.validateSchema(schema as Json), place).toBe(true);
      expect(() => validatorAt(`meta ${place}`, schema), place).not.toThrow();
    }
  });

  test("error answers list codes of their own status, each with an example of that code", () => {
    let seen = 0;
    for (const { op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        if (Number(status) < 400) continue;
        const content = response.content["application/json"];
        const codes: string[] = content.schema.allOf[1].properties.error.properties.code.enum;
        for (const code of codes)
          expect<number>(ERROR_STATUS[code as keyof typeof ERROR_STATUS]).toBe(Number(status));
        expect(Object.keys(content.examples).sort()).toEqual([...codes].sort());
        // An answer naming what to fix shows it in its example too.
        for (const code of ["invalid_parameter", "invalid_field", "email_taken"])
          if (codes.includes(code)) expect(content.examples[code].value.error.field).toBeString();
        expect(response.headers["X-Request-Id"].required).toBe(true);
        if (status === "429") expect(response.headers["Retry-After"].required).toBe(true);
        if (status === "405") expect(response.headers.Allow.required).toBe(true);
        seen++;
      }
    }
    expect(seen).toBeGreaterThan(0);
    expect(
      [...doc.components.schemas.ApiError.properties.error.properties.code.enum].sort(),
    ).toEqual(
      Object.keys(ERROR_STATUS)
        .filter((code) => !(MANAGE_ONLY_CODES as string[]).includes(code))
        .sort(),
    );
  });

  test("authenticated operations need a key and name their permission; service paths need none", () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual([
      "apiKeyHeader",
      "bearerAuth",
    ]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({
      type: "http",
      scheme: "bearer",
    });
    expect(doc.components.securitySchemes.apiKeyHeader).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "X-Api-Key",
    });
    for (const route of apiRoutes) {
      const op = doc.paths[openApiPath(route.path)][route.method.toLowerCase()];
      const permission = `${route.area}:${route.method === "GET" ? "read" : "write"}`;
      expect(op.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
      expect(op["x-permission"]).toBe(permission);
      expect(op.description).toBe(`Needs the \`${permission}\` permission.`);
      const success =
        op.responses[route.method === "POST" && /^\/[^/]+$/.test(route.path) ? "201" : "200"];
      for (const name of [
        "X-Request-Id",
        "RateLimit-Limit",
        "RateLimit-Remaining",
        "RateLimit-Reset",
      ]) {
        expect(success.headers[name].required, `${route.method} ${route.path} ${name}`).toBe(true);
      }
      const headerParams = op.parameters.filter((p: Json) => p.$ref).map((p: Json) => p.$ref);
      expect(headerParams.includes("#/components/parameters/IdempotencyKey")).toBe(
        Boolean(route.idempotent),
      );
    }
    for (const path of ["/healthz", "/api/v1/openapi.json", "/api/v1/docs"])
      expect(doc.paths[path].get.security).toEqual([]);
  });

  test("says for generators what JSON Schema can say (issue 16)", () => {
    const consts: Json[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) {
        node.forEach(walk);
        return;
      }
      if (!node || typeof node !== "object") return;
      if ("const" in node) consts.push(node as Json);
      Object.values(node).forEach(walk);
    };
    walk(doc);
    expect(consts.length).toBeGreaterThan(10);
    expect(consts.filter((c) => typeof c.type !== "string")).toEqual([]);
    expect(doc.components.schemas.Error).toBeUndefined();
    expect(JSON.stringify(doc.servers)).not.toContain("shop1");
    const orders = doc.paths["/api/v1/orders"].get;
    const query = Object.fromEntries(
      orders.parameters.filter((p: Json) => p.in === "query").map((p: Json) => [p.name, p.schema]),
    );
    expect(query.limit).toEqual({ type: "integer", minimum: 1, maximum: 100, default: 50 });
    expect(query.status).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
    });
    expect(query.paid).toEqual({ type: "boolean" });
    const list = orders.responses["200"].content["application/json"].schema;
    expect(list.oneOf).toBeUndefined();
    expect(list.properties.nextCursor.type).toEqual(["string", "null"]);
    for (const { path, op } of operations()) {
      for (const p of op.parameters.filter((p: Json) => p.in === "path")) {
        expect([p.example, p.schema.type, p.schema.minimum], path).toEqual([1, "integer", 1]);
      }
    }
    for (const route of apiRoutes.filter((r) => r.method === "PATCH")) {
      const body =
        doc.paths[openApiPath(route.path)].patch.requestBody.content["application/json"].schema;
      expect(body.minProperties, route.path).toBe(1);
    }
    const batch = doc.paths["/api/v1/products/batch"].post;
    const items = batch.requestBody.content["application/json"].schema.properties.items;
    expect(items.items.anyOf.map((item: Json) => item.required)).toEqual([
      ["id"],
      ["internalSku"],
      ["sku"],
    ]);
    expect(items.items.anyOf[0].properties.price).toMatchObject({
      type: "number",
      minimum: 0,
      maximum: 1_000_000_000,
    });
    const result =
      batch.responses["200"].content["application/json"].schema.properties.data.properties.results
        .items.anyOf[1];
    expect(result.properties.error.properties.code.enum).toEqual([
      "invalid_field",
      "nothing_to_update",
      "not_found",
    ]);
  });

  test("the checked-in copy is up to date", () => {
    const expected = `${JSON.stringify(doc, null, 2)}\n`;
    let actual = "";
    try {
      actual = readFileSync(CHECKED_IN, "utf8");
    } catch {}
    if (actual !== expected) {
      throw new Error(
        "docs/openapi.json is out of date with the routes: regenerate it with `npm run openapi` (bun src/main.ts openapi > docs/openapi.json) and commit it.",
      );
    }
  });

  test("storeapi openapi prints the document", () => {
    const run = Bun.spawnSync(
      [process.execPath, join(import.meta.dir, "..", "src", "main.ts"), "openapi"],
      { stdout: "pipe", stderr: "pipe" },
    );
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout.toString())).toEqual(doc);
  });
});

describe("reference page", () => {
  const page = docsPage(doc);

  test("is self-contained: no script, style, image or link from another host", () => {
    expect(page).not.toMatch(/\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i);
    expect(page).not.toMatch(/@import|url\(/i);
    expect(page).toContain("connect-src 'self'");
    expect(page).toContain(`content="default-src 'none'`);
  });

  test("says how Try it picks the store host, and whether the page's own host is one", () => {
    expect(page).toContain('<body data-store-host="no">');
    expect(page).toContain(`<p id="hostnote">${HOST_NOTE}</p>`);
    expect(HOST_NOTE).toContain("Try it sends each request to the store host you pick");
    expect(docsPage(doc, { onStoreHost: true })).toContain('<body data-store-host="yes">');
    const script = /<script>([\s\S]*?)<\/script>/.exec(page)?.[1] ?? "";
    expect(script).toContain('id: "store-host"');
    expect(() => new Function(script)).not.toThrow();
  });

  test("embeds the document so that no text in it can close the script element", () => {
    const embedded = /<script type="application\/json" id="openapi">([\s\S]*?)<\/script>/.exec(
      page,
    );
    expect(embedded).not.toBeNull();
    expect(JSON.parse(embedded?.[1] ?? "")).toEqual(doc);
    const hostile = docsPage({ info: { title: "</script><script>alert(1)</script>" } });
    expect(hostile).not.toContain("</script><script>alert(1)");
  });

  test("its script is docs-page.browser.js as written, and renders every operation with a link and a Try it form", () => {
    expect(page).toContain(`<script>${SCRIPT}</script>`);
    expect(SCRIPT).not.toMatch(/<\/script/i);
    const window = new Window({ settings: { disableJavaScriptEvaluation: true } });
    window.document.write(page);
    new Function("document", "fetch", "location", SCRIPT)(
      window.document,
      () => Promise.reject(new Error("no network here")),
      window.location,
    );
    const all = (selector: string) =>
      [...window.document.querySelectorAll(selector)].map((node) => node.textContent);
    const operations = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => method !== "options")
        .map((method) => `${method.toUpperCase()}${path}`),
    );
    expect(all("#main section.card h3").sort()).toEqual(["Overview", ...operations].sort());
    expect(all("#side a[href^='#op-']").length).toBe(operations.length);
    expect(
      all("#main section.card details > summary").filter(
        (text) => text === "Try it (sent to the store host above)",
      ).length,
    ).toBe(operations.length);
    window.close();
  });
});

describe("expectDocumented", () => {
  const health = { ok: true, data: { status: "ok" } };
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
    status,
    headers: new Headers({
      "Content-Type": "application/json; charset=utf-8",
      "X-Request-Id": "r1",
      ...headers,
    }),
    text: JSON.stringify(body),
    json: body,
  });

  test("accepts an answer the document describes", () => {
    expect(() => expectDocumented("GET", "/healthz", answer(200, health))).not.toThrow();
    const keyInUrl = { ok: false, error: { code: "key_in_url", message: "No keys in URLs." } };
    expect(() => expectDocumented("GET", "/healthz?apikey=x", answer(400, keyInUrl))).not.toThrow();
    const notFound = { ok: false, error: { code: "not_found", message: "No such path." } };
    expect(() =>
      expectDocumented("DELETE", "/api/v1/nothing", answer(404, notFound)),
    ).not.toThrow();
  });

  test("refuses an undocumented field, status, code or header, and a missing request id", () => {
    expect(() => expectDocumented("GET", "/healthz", answer(200, { ...health, extra: 1 }))).toThrow(
      /documented schema/,
    );
    expect(() => expectDocumented("GET", "/healthz", answer(201, health))).toThrow(
      /status 201 is not documented/,
    );
    const wrongCode = { ok: false, error: { code: "not_found", message: "x" } };
    expect(() => expectDocumented("GET", "/healthz", answer(400, wrongCode))).toThrow(
      /documented schema/,
    );
    expect(() =>
      expectDocumented("GET", "/healthz", answer(200, health, { "RateLimit-Limit": "120" })),
    ).toThrow(/not documented/);
    const noId = {
      ...answer(200, health),
      headers: new Headers({ "Content-Type": "application/json; charset=utf-8" }),
    };
    expect(() => expectDocumented("GET", "/healthz", noId)).toThrow(/X-Request-Id/);
    const misfiled = { ok: false, error: { code: "not_found", message: "x" } };
    expect(() => expectDocumented("DELETE", "/api/v1/nothing", answer(400, misfiled))).toThrow(
      /belongs to status 404/,
    );
  });
});
