/** The OpenAPI document and reference page. (Placeholder until the OpenAPI issue.) */
export function openApiDocument(): unknown {
  return { openapi: "3.1.0", info: { title: "storeapi", version: "1.0.0" }, paths: {} };
}

export function docsHtml(): string {
  return "<!doctype html><title>storeapi API reference</title><h1>storeapi API reference</h1>";
}
