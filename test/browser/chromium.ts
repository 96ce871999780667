import { existsSync } from "node:fs";

/**
 * The Chromium the browser tests drive: `STOREAPI_CHROMIUM`, else Debian's `chromium`
 * (never a downloaded browser). Undefined when there is none; with
 * `STOREAPI_REQUIRE_BROWSER=1` (CI) a missing browser is an error instead.
 */
export function findChromium(): string | undefined {
  const candidates = [
    process.env.STOREAPI_CHROMIUM,
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
  ].filter(Boolean) as string[];
  const found = candidates.find((path) => existsSync(path));
  if (!found && process.env.STOREAPI_REQUIRE_BROWSER === "1") {
    throw new Error(
      `STOREAPI_REQUIRE_BROWSER=1 but no Chromium at ${candidates.join(", ")}; apt-get install chromium`,
    );
  }
  return found;
}

/** Flags for a headless run as root on a CI box: no sandbox, no GPU, nothing fetched in the background. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
