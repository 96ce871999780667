// Imported as text so `bun build --compile` embeds them in the binary.
import css from "./assets/admin.css" with { type: "text" };
import script from "./assets/admin.js" with { type: "text" };

export const ASSET_PATHS = {
  css: "/api/admin/assets/admin.css",
  js: "/api/admin/assets/admin.js",
} as const;

const asset = (body: string, type: string) => ({
  body,
  type,
  /** Said outright: for HEAD the body is dropped, and the runtime would say 0. */
  length: String(new TextEncoder().encode(body).byteLength),
});

/** Path → body, content type and byte length of the screen's only two files. */
export const ASSETS: Record<string, { body: string; type: string; length: string }> = {
  [ASSET_PATHS.css]: asset(css, "text/css; charset=utf-8"),
  [ASSET_PATHS.js]: asset(script, "text/javascript; charset=utf-8"),
};
