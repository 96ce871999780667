import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { Window } from "happy-dom";
import { MANAGE_API_SPEC, manageDocsHtml, manageOpenApiDocument } from "../src/manage/openapi";
import { manageRoutes } from "../src/manage/routes";
import SCRIPT from "../src/openapi/docs-page.browser.js" with { type: "text" };
import { buildOpenApi } from "../src/openapi/document";
import { tempDir } from "./helpers";
import { dataDirIn, manage, newHostKey, storeBody } from "./manage-support";
import {
  codeOf,
  compileStrict,
  documentedOperations,
  generatedOperations,
  redoclyProblems,
  runProgram,
  spectralProblems,
  TOOL_TIMEOUT,
  toolWorkDir,
} from "./openapi-tools";
import { runCli, type ServerProcess, spawnServer } from "./process";

/**
 * The management API's OpenAPI document (issue 17 item 6): served without a key, built
 * from the schemas that validate, checked in, linted, and typed into a client that compiles
 * under `tsc --strict` and runs against a real server. (Every answer of the other
 * management tests is checked against it by test/manage-support.ts.)
 */

setDefaultTimeout(60_000);

type Json = Record<string, any>;

const CHECKED_IN = join(import.meta.dir, "..", "docs", "manage-openapi.json");
const CLIENT = join(import.meta.dir, "clients", "manage.ts");

/** management-api.md §2, and nothing else. */
const OPERATIONS = [
  "GET /manage/v1/openapi.json getOpenApi",
  "GET /manage/v1/docs getDocs",
  "GET /manage/v1/stores getStores",
  "POST /manage/v1/stores postStores",
  "GET /manage/v1/stores/{slug} getStoresBySlug",
  "PATCH /manage/v1/stores/{slug} patchStoresBySlug",
  "DELETE /manage/v1/stores/{slug} deleteStoresBySlug",
  "PUT /manage/v1/stores/{slug}/order-statuses putStoresBySlugOrderstatuses",
  "GET /manage/v1/stores/{slug}/keys getStoresBySlugKeys",
  "POST /manage/v1/stores/{slug}/keys postStoresBySlugKeys",
  "DELETE /manage/v1/stores/{slug}/keys/{id} deleteStoresBySlugKeysById",
  "POST /manage/v1/stores/{slug}/keys/{id}/roll postStoresBySlugKeysByIdRoll",
  "POST /manage/v1/stores/{slug}/orders postStoresBySlugOrders",
  "POST /manage/v1/stores/{slug}/leads postStoresBySlugLeads",
  "POST /manage/v1/stores/{slug}/customers/{id}/sign-ins postStoresBySlugCustomersByIdSignins",
  "POST /manage/v1/stores/{slug}/admin-links postStoresBySlugAdminlinks",
];

const doc = manageOpenApiDocument() as Json;
const operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({
    path,
    method,
    operation: operation as Json,
  })),
);
const routeOperations = operations.filter((o) => o.operation.tags[0] !== "Service");

let dir: string;
let server: ServerProcess;
let hostKey: string;

beforeAll(async () => {
  dir = tempDir("storeapi-manage-openapi-");
  hostKey = await newHostKey(dataDirIn(dir));
  server = await spawnServer(dataDirIn(dir));
});
afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /manage/v1/openapi.json and /manage/v1/docs", () => {
  test("answer on any host without a key (each answer checked against the document)", async () => {
    const served = await manage(server.url, "GET", "/openapi.json", {
      key: null,
      headers: { Host: "anything.example" },
    });
    expect(served.status).toBe(200);
    expect(served.json).toEqual(JSON.parse(JSON.stringify(doc)));
    const page = await manage(server.url, "GET", "/docs", { key: null });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toStartWith("text/html");
    expect(page.text).toContain('<body data-store-host="any">');
    expect(page.text).toContain("<title>Store Management API: management API reference</title>");
    const embedded = /<script type="application\/json" id="openapi">([\s\S]*?)<\/script>/.exec(
      page.text,
    );
    expect(JSON.parse(embedded?.[1] ?? "null")).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  test("the page renders every operation; Try it sends to the page's own host and asks only for a host key", () => {
    const window = new Window({
      url: "http://any.example:8080/manage/v1/docs",
      settings: { disableJavaScriptEvaluation: true },
    });
    window.document.write(manageDocsHtml());
    new Function("document", "fetch", "location", SCRIPT)(
      window.document,
      () => Promise.reject(new Error("no network here")),
      window.location,
    );
    const all = (selector: string) =>
      [...window.document.querySelectorAll(selector)].map((node) => node.textContent);
    expect(all("#main section.card h3").sort()).toEqual(
      ["Overview", ...operations.map((o) => `${o.method.toUpperCase()}${o.path}`)].sort(),
    );
    expect(
      all("#main section.card details > summary").filter(
        (text) => text === "Try it (sent to this page's host)",
      ).length,
    ).toBe(operations.length);
    expect(all("#keybar span")).toEqual(["Host key:"]);
    expect(window.document.querySelector("#keybar input")?.getAttribute("placeholder")).toBe(
      "svc_hk_… (kept in this page only)",
    );
    window.close();
  });

  test("key in the URL is 400; OPTIONS is 405 before any key; another method is an ordinary request", async () => {
    expect(
      (await manage(server.url, "GET", "/openapi.json?apikey=x", { key: null })).json.error.code,
    ).toBe("key_in_url");
    for (const path of ["/openapi.json", "/docs"]) {
      const options = await manage(server.url, "OPTIONS", path, { key: null });
      expect([options.status, options.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
      expect(
        (await manage(server.url, "POST", path, { key: null, body: {} })).json.error.code,
      ).toBe("unauthorized");
      const post = await manage(server.url, "POST", path, { key: hostKey, body: {} });
      expect([post.status, post.headers.get("allow"), post.json.error.code]).toEqual([
        405,
        "GET, HEAD",
        "method_not_allowed",
      ]);
    }
  });

  test("come before the HTTPS check (management-api.md §2's order)", async () => {
    const other = tempDir("storeapi-manage-openapi-https-");
    await newHostKey(dataDirIn(other)); // makes the data directory
    const httpsOnly = await spawnServer(dataDirIn(other), [], {}, { allowHttp: false });
    try {
      expect((await manage(httpsOnly.url, "GET", "/openapi.json", { key: null })).status).toBe(200);
      expect((await manage(httpsOnly.url, "GET", "/docs", { key: null })).status).toBe(200);
      expect((await manage(httpsOnly.url, "GET", "/stores", { key: null })).json.error.code).toBe(
        "https_required",
      );
    } finally {
      await httpsOnly.signal("SIGTERM");
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe("the document", () => {
  test("is built from the routes with nothing left out", () => {
    expect(buildOpenApi(manageRoutes, MANAGE_API_SPEC).problems).toEqual([]);
    expect(documentedOperations(doc).sort()).toEqual([...OPERATIONS].sort());
  });

  test("a host key as Bearer or X-Api-Key on every route; the document and its page need none", () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({
      type: "http",
      scheme: "bearer",
    });
    expect(doc.components.securitySchemes.apiKeyHeader).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "X-Api-Key",
    });
    expect(JSON.stringify(doc.components.securitySchemes)).toContain("svc_hk_");
    for (const { operation } of routeOperations)
      expect(operation.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
    expect(operations.filter((o) => o.operation.security.length === 0).map((o) => o.path)).toEqual([
      "/manage/v1/openapi.json",
      "/manage/v1/docs",
    ]);
  });

  test("a domain, a name and an origin the server refuses are refused by the document too", () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const bodyOf = (path: string) =>
      ajv.compile(doc.paths[path].post.requestBody.content["application/json"].schema);
    const store = bodyOf("/manage/v1/stores");
    const storeWith = (change: Json) => store({ ...storeBody("docs"), ...change });
    const link = bodyOf("/manage/v1/stores/{slug}/admin-links");
    const lead = bodyOf("/manage/v1/stores/{slug}/leads");
    const cases: Array<[string, boolean, boolean]> = [
      ["domain localhost", storeWith({ domain: "localhost" }), false],
      ["domain shop.123", storeWith({ domain: "shop.123" }), false],
      ["domain 1.2.3.4.5", storeWith({ domain: "1.2.3.4.5" }), false],
      ["domain shop.example.com", storeWith({ domain: "shop.example.com" }), true],
      ["domain x.1-2", storeWith({ domain: "x.1-2" }), true],
      ["name of spaces", storeWith({ name: "   " }), false],
      ["name", storeWith({ name: " Shop " }), true],
      ["origin port 99999", link({ origin: "https://a.example.com:99999" }), false],
      ["origin port 8443", link({ origin: "https://a.example.com:8443" }), true],
      ["origin IPv6", link({ origin: "http://[::1]:8080" }), true],
      ["empty lead name", lead({ name: "" }), false],
    ];
    expect(cases.filter(([, valid, expected]) => valid !== expected).map(([what]) => what)).toEqual(
      [],
    );
  });

  test("Idempotency-Key on exactly the four creating POSTs", () => {
    const idempotent = routeOperations.filter((o) =>
      o.operation.parameters.some((p: Json) => p.$ref === "#/components/parameters/IdempotencyKey"),
    );
    expect(idempotent.map((o) => `${o.method} ${o.path}`).sort()).toEqual([
      "post /manage/v1/stores",
      "post /manage/v1/stores/{slug}/keys",
      "post /manage/v1/stores/{slug}/leads",
      "post /manage/v1/stores/{slug}/orders",
    ]);
    for (const o of idempotent)
      expect(Object.keys(o.operation.responses["201"].headers)).toContain("Idempotent-Replayed");
  });

  test("RateLimit headers on every success; 401 and 429 as the store API's; the management API's conflicts", () => {
    for (const { operation } of routeOperations) {
      const success = operation.responses["200"] ?? operation.responses["201"];
      for (const name of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"])
        expect(success.headers[name].required).toBe(true);
      expect(
        operation.responses["401"].content["application/json"].schema.allOf[1].properties.error
          .properties.code.enum,
      ).toEqual(["unauthorized"]);
      expect(Object.keys(operation.responses["429"].headers)).toContain("Retry-After");
    }
    const codes = doc.components.schemas.ApiError.properties.error.properties.code.enum as string[];
    expect(codes).toEqual(
      expect.arrayContaining([
        "slug_taken",
        "domain_taken",
        "status_in_use",
        "number_taken",
        "customer_locked",
        "key_inactive",
      ]),
    );
    expect(codes).not.toContain("insufficient_scope");
    expect(codes).not.toContain("plan_required");
    const conflicts = (method: string, path: string) =>
      doc.paths[path][method].responses["409"].content["application/json"].schema.allOf[1]
        .properties.error.properties.code.enum;
    expect(conflicts("post", "/manage/v1/stores")).toEqual(["slug_taken", "domain_taken"]);
    expect(conflicts("put", "/manage/v1/stores/{slug}/order-statuses")).toEqual(["status_in_use"]);
    expect(conflicts("post", "/manage/v1/stores/{slug}/keys/{id}/roll")).toEqual(["key_inactive"]);
  });

  test("lists: GET /stores pages with limit and cursor; a store's keys are one array", () => {
    const list = doc.paths["/manage/v1/stores"].get;
    const query = Object.fromEntries(
      list.parameters.filter((p: Json) => p.in === "query").map((p: Json) => [p.name, p.schema]),
    );
    expect(query.limit).toMatchObject({ type: "integer", minimum: 1, maximum: 100 });
    expect(query.cursor).toMatchObject({ type: "string" });
    expect(list.responses["200"].content["application/json"].schema.required).toEqual([
      "ok",
      "data",
      "hasMore",
      "nextCursor",
    ]);
    const keys =
      doc.paths["/manage/v1/stores/{slug}/keys"].get.responses["200"].content["application/json"]
        .schema;
    expect(keys.required).toEqual(["ok", "data"]);
    expect(keys.properties.data.type).toBe("array");
  });

  test("the checked-in copy is up to date", () => {
    const expected = `${JSON.stringify(doc, null, 2)}\n`;
    let actual = "";
    try {
      actual = readFileSync(CHECKED_IN, "utf8");
    } catch {}
    if (actual !== expected) {
      throw new Error(
        "docs/manage-openapi.json is out of date with the routes: regenerate it with `npm run openapi` and commit it.",
      );
    }
  });

  test("storeapi openapi --manage prints it", async () => {
    const run = await runCli(["openapi", "--manage"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(JSON.parse(JSON.stringify(doc)));
  });
});

describe("the served document, as client tools read it", () => {
  let work: string;
  beforeAll(async () => {
    work = toolWorkDir("storeapi-manage-client-");
    const served = await manage(server.url, "GET", "/openapi.json", { key: null });
    writeFileSync(join(work, "openapi.json"), JSON.stringify(served.json, null, 2));
  });
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test(
    "Spectral and Redocly find no errors and no warnings but the accepted ones",
    async () => {
      expect(await spectralProblems(work, "openapi.json")).toEqual(["warning info-contact"]);
      const redocly = await redoclyProblems(work, "openapi.json");
      expect(redocly.problems).toEqual(["warn info-license"]);
      expect(redocly.errors).toBe(0);
    },
    TOOL_TIMEOUT,
  );

  test(
    "openapi-typescript types exactly its operations, and a natural client compiles under tsc --strict",
    async () => {
      expect((await generatedOperations(work, "openapi.json")).sort()).toEqual(
        OPERATIONS.map((o) => o.split(" ")[2]).sort(),
      );
      expect(codeOf(CLIENT)).not.toMatch(/\bas\b|\bany\b|@ts-|!\./); // no casts, no non-null assertions, no escape hatches
      const tsc = await compileStrict(work, CLIENT);
      expect(tsc.output).toBe("");
      expect(tsc.code).toBe(0);
    },
    TOOL_TIMEOUT,
  );

  test(
    "and runs against the real server: create a store, a key, an order, roll the key",
    async () => {
      const client = await runProgram(work, CLIENT, {
        STOREAPI_URL: server.url,
        STOREAPI_HOST_KEY: hostKey,
      });
      expect(client.stderr).toBe("");
      expect(JSON.parse(client.stdout)).toEqual({
        store: { slug: "natural", statuses: 6, replayed: "true" },
        key: {
          name: "ERP",
          shown: true,
          permissions: { products: "none", orders: "read", customers: "none", leads: "none" },
        },
        order: { number: 1001, total: 99.9 },
        duplicate: "number_taken",
        rolled: { name: "ERP", shown: true, listed: 2 },
        storeApi: { old: 200, new: 200 },
      });
    },
    TOOL_TIMEOUT,
  );
});
