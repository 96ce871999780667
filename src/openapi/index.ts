import { apiRoutes } from "../routes";
import { docsPage } from "./docs-page";
import { buildOpenApi } from "./document";

/**
 * The OpenAPI document of `apiRoutes` and the reference page built from it (one for a
 * store's host, one for any other). They are built on first use and kept: they are served on every request of their path.
 */
let document: unknown;
const pages = new Map<boolean, string>();

export function openApiDocument(): unknown {
  document ??= buildOpenApi(apiRoutes).document;
  return document;
}

/** `onStoreHost`: whether the request's host is a store's (the page's Try it uses it). */
export function docsHtml(onStoreHost: boolean): string {
  let page = pages.get(onStoreHost);
  if (!page) {
    page = docsPage(openApiDocument(), { onStoreHost });
    pages.set(onStoreHost, page);
  }
  return page;
}
