import { docsPage } from "./openapi/docs-page";
import { buildOpenApi } from "./openapi/document";
import { apiRoutes } from "./routes";

/**
 * The OpenAPI document of `apiRoutes` and the reference page built from it. Both are
 * built on first use and kept: they are served on every request of their path.
 */
let document: unknown;
let page: string | undefined;

export function openApiDocument(): unknown {
  document ??= buildOpenApi(apiRoutes).document;
  return document;
}

export function docsHtml(): string {
  page ??= docsPage(openApiDocument());
  return page;
}
