// Imported as text so `bun build --compile` embeds them in the binary.
import css from "./assets/admin.css" with { type: "text" };
import script from "./assets/admin.js" with { type: "text" };

export const ASSET_PATHS = {
  css: "/api/admin/assets/admin.css",
  js: "/api/admin/assets/admin.js",
} as const;

/** Path → body and content type of the screen's only two files. */
export const ASSETS: Record<string, { body: string; type: string }> = {
  [ASSET_PATHS.css]: { body: css, type: "text/css; charset=utf-8" },
  [ASSET_PATHS.js]: { body: script, type: "text/javascript; charset=utf-8" },
};
