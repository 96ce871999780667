/**
 * End to end in a real Chromium (playwright-core driving Debian's chromium, headless):
 * the store admin's "API and keys" screen served by `storeapi serve` in its own process.
 * Skipped, with one line saying so, when no Chromium is installed (STOREAPI_REQUIRE_BROWSER=1
 * makes that a failure).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { BAD_LINK, EMAIL_SENT, LIMIT_SENTENCE, NOT_SHOWN_AGAIN } from "../../src/admin/pages";
import { loadFixture } from "../../src/load/load";
import { otherStore, send, testStore } from "../helpers";
import { eventually, parseMessage } from "../mail-support";
import { runCli, type ServerProcess, spawnServer } from "../process";
import { testLocation } from "../sqld";
import { CHROMIUM_ARGS, findChromium } from "./chromium";

const ROOT = join(import.meta.dir, "../..");
/**
 * Screenshots land here (ignored by git). The README's copy, docs/admin-screen.png, is
 * refreshed only with STOREAPI_UPDATE_SCREENSHOT=1, so a test run leaves the tree clean.
 */
const OUTPUT_DIR = process.env.STOREAPI_TEST_OUTPUT ?? join(ROOT, ".tmp/test-output");
const STORE_NAME = "מאפיית לב · Lev Bakery";
/** A browser on a shared 2-core machine: generous bounds, never a tight timeout. */
const SLOW = 120_000;

const chromiumPath = findChromium();
if (!chromiumPath)
  console.log(
    "browser tests skipped: no Chromium found (apt-get install chromium, or set STOREAPI_CHROMIUM)",
  );

describe.skipIf(!chromiumPath)("the API and keys screen in Chromium", () => {
  let dir: string;
  let mailDir: string;
  let server: ServerProcess;
  let port: string;
  let context: BrowserContext;
  let page: Page;
  let evil: ReturnType<typeof Bun.serve>;
  const origin = () => `http://shop1.localhost:${port}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "storeapi-browser-"));
    mailDir = join(dir, "mail");
    await loadFixture(await testLocation(join(dir, "data")), {
      stores: [
        testStore({ name: STORE_NAME, keys: [] }),
        otherStore({ keys: [] }),
        // The back/forward cache test's own: its keys change no other test's count.
        testStore({
          slug: "shop3",
          domain: "shop3.test",
          ownerEmail: "owner@shop3.test",
          keys: [],
        }),
      ],
    });
    server = await spawnServer(join(dir, "data"), ["--mail-dir", mailDir]);
    port = new URL(server.url).port;
    const { chromium } = await import("playwright-core");
    context = await chromium.launchPersistentContext(join(dir, "profile"), {
      executablePath: chromiumPath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    // Another origin: a host's panel linking to the screen (/hand-over?to=URL), and a form
    // aimed at the screen (a cross-site request forgery attempt).
    evil = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (request) =>
        new Response(
          new URL(request.url).pathname === "/hand-over"
            ? `<!doctype html><a href="${new URL(request.url).searchParams.get("to")}">Manage API keys</a>`
            : `<!doctype html><form method="post" action="${origin()}/api/admin/keys">` +
                '<input name="name" value="stolen"><input name="orders" value="write"><button>Go</button></form>',
          { headers: { "Content-Type": "text/html" } },
        ),
    });
  }, SLOW);

  afterAll(async () => {
    await context?.close();
    evil?.stop(true);
    await server?.signal("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }, SLOW);

  const apiStatus = async (key: string) =>
    (await send(server.url, "/api/v1/orders", { host: "shop1.localhost", key })).status;

  async function signInWithCliLink(slug = "shop1") {
    const link = await runCli(
      ["admin-link", slug, "--origin", origin(), "--json", "--data", join(dir, "data")],
      { underTest: true },
    );
    expect(link.code).toBe(0);
    return JSON.parse(link.stdout).url as string;
  }

  /** The page's HTML, read once a navigation under way (a reload) lets it be read. */
  async function settledContent(tab: Page): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await tab.content();
      } catch (error) {
        if (attempt === 100 || !String(error).includes("navigating")) throw error;
        await Bun.sleep(100);
      }
    }
  }

  async function createKey(name: string, orders: "No access" | "Read" | "Read and update") {
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByRole("group", { name: "Orders" }).getByLabel(orders, { exact: true }).check();
    await page.getByRole("button", { name: "Create key" }).click();
  }

  test(
    "sign in through a CLI link, create a key, use it, reload, delete it, sign out",
    async () => {
      const response = await page.goto(await signInWithCliLink());
      expect(response?.status()).toBe(200);
      expect(page.url()).toBe(`${origin()}/api/admin/`);
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe(STORE_NAME);
      expect(await page.locator("h1").getAttribute("dir")).toBe("auto");

      await createKey("ERP", "Read and update");
      expect(page.url()).toBe(`${origin()}/api/admin/keys/new`);
      const secret = (await page.locator("#new-key").textContent()) ?? "";
      expect(secret).toMatch(/^svc_sk_[A-Za-z0-9]{40}$/);
      expect(await page.getByText(NOT_SHOWN_AGAIN).count()).toBe(1);
      const copy = page.getByRole("button", { name: "Copy key" });
      expect(await copy.isVisible()).toBe(true); // the script revealed it
      await copy.click();
      await page.getByText("Copied.").waitFor();
      mkdirSync(OUTPUT_DIR, { recursive: true });
      await page.screenshot({ path: join(OUTPUT_DIR, "admin-key-created.png"), fullPage: true });
      expect(await apiStatus(secret)).toBe(200);

      // Reloading or going back never shows the key again.
      await page.reload();
      expect(page.url()).toBe(`${origin()}/api/admin/`);
      expect(await page.locator("#new-key").count()).toBe(0);
      await page.goBack();
      expect(await page.content()).not.toContain(secret);
      await page.goto(`${origin()}/api/admin/`);
      const row = page.getByRole("row", { name: /ERP/ });
      expect(await row.getByRole("cell").nth(2).textContent()).toBe("Read and update");
      expect(await row.getByRole("cell").nth(6).textContent()).toBe("No limit");
      const date = /^\d{1,2} [A-Z][a-z]+ \d{4}, \d{2}:\d{2}$/;
      expect(await row.getByRole("cell").nth(5).textContent()).toMatch(date); // Created
      // Last used: the API call above shows within a few seconds (until then "Never").
      expect(await row.getByRole("cell").nth(7).textContent()).toMatch(
        new RegExp(`Never|${date.source.slice(1, -1)}`),
      );

      await row.getByRole("button", { name: /Delete/ }).click();
      await page.getByRole("button", { name: "Delete key" }).click();
      expect(page.url()).toBe(`${origin()}/api/admin/`);
      expect(await apiStatus(secret)).toBe(401); // at once: no cache of keys to wait out
      expect(await page.getByText("0 of 5 active keys in use.").count()).toBe(1);

      await page.getByRole("button", { name: "Sign out" }).click();
      expect(page.url()).toBe(`${origin()}/api/admin/sign-in`);
      await page.goto(`${origin()}/api/admin/`);
      expect(page.url()).toBe(`${origin()}/api/admin/sign-in`);

      const mail = await eventually(() => {
        const files = readdirSync(mailDir).filter((f) => f.startsWith("shop1-"));
        return files.length >= 2 ? files : undefined;
      });
      const subjects = mail
        .map((f) => parseMessage(readFileSync(join(mailDir, f), "latin1")).headers.subject)
        .sort();
      expect(subjects).toEqual([
        `API key "ERP" created for ${STORE_NAME}`,
        `API key "ERP" deleted for ${STORE_NAME}`,
      ]);
    },
    SLOW,
  );

  test(
    "going back to a new key's page never shows the key, with the back/forward cache on, scripts on or off",
    async () => {
      const { chromium } = await import("playwright-core");
      // Playwright turns Chrome's back/forward cache off; a user's Chrome has it on, and
      // keeps `Cache-Control: no-store` pages in it.
      const browser = await chromium.launch({
        executablePath: chromiumPath,
        headless: true,
        args: CHROMIUM_ARGS,
        ignoreDefaultArgs: ["--disable-back-forward-cache"],
      });
      try {
        for (const javaScriptEnabled of [true, false]) {
          const own = await browser.newContext({ javaScriptEnabled });
          const tab = await own.newPage();
          const shop3 = `http://shop3.localhost:${port}`;
          const link = await runCli(
            ["admin-link", "shop3", "--origin", shop3, "--json", "--data", join(dir, "data")],
            { underTest: true },
          );
          await tab.goto(JSON.parse(link.stdout).url);
          const leaveAndComeBack = async (leave: () => Promise<unknown>) => {
            await tab.getByLabel("Name", { exact: true }).fill(`cache-${javaScriptEnabled}`);
            await tab
              .getByRole("group", { name: "Leads" })
              .getByLabel("Read", { exact: true })
              .check();
            await tab.getByRole("button", { name: "Create key" }).click();
            const secret = (await tab.locator("#new-key").textContent()) ?? "";
            expect(secret).toMatch(/^svc_sk_/);
            await leave();
            // A page brought back from the cache fires no load event: wait for the commit.
            await tab.goBack({ waitUntil: "commit" });
            const shown = (await settledContent(tab)).includes(secret);
            // Loaded afresh, the page is the screen: the key is not shown again.
            if (!shown) await tab.waitForURL(`${shop3}/api/admin/`);
            return [javaScriptEnabled, shown];
          };
          const byLink = () => tab.getByRole("link", { name: "Back to API and keys" }).click();
          expect(await leaveAndComeBack(byLink)).toEqual([javaScriptEnabled, false]);
          await tab.goto(`${shop3}/api/admin/`);
          // Off to another site: only the page's script can clear the key as it goes.
          if (javaScriptEnabled) {
            const elsewhere = () => tab.goto(`http://127.0.0.1:${evil.port}/hand-over?to=x`);
            expect(await leaveAndComeBack(elsewhere)).toEqual([true, false]);
          }
          await own.close();
        }
      } finally {
        await browser.close();
      }
    },
    SLOW,
  );

  test(
    "sign in through the emailed link; five keys, and a sixth is refused with the sentence",
    async () => {
      await context.clearCookies();
      await page.goto(`${origin()}/api/admin/sign-in`);
      await page.getByLabel("Email").fill("owner@shop1.test");
      await page.getByRole("button", { name: "Email me a sign-in link" }).click();
      await page.getByText(EMAIL_SENT).waitFor();
      const url = await eventually(() => {
        for (const file of readdirSync(mailDir)) {
          const message = parseMessage(readFileSync(join(mailDir, file), "latin1"));
          const found =
            /http:\/\/shop1\.localhost:\d+\/api\/admin\/sign-in\?token=[A-Za-z0-9_-]+/.exec(
              message.text,
            );
          if (found) return found[0];
        }
        return undefined;
      });
      await page.goto(url);
      expect(page.url()).toBe(`${origin()}/api/admin/`);

      const names = ["ERP", "Warehouse", "Reports", "Accounting", "Newsletter"];
      const access = ["Read and update", "Read", "Read", "No access", "Read"] as const;
      for (const [i, name] of names.entries()) {
        await page.goto(`${origin()}/api/admin/`);
        if (name === "Accounting")
          await page
            .getByRole("group", { name: "Customers" })
            .getByLabel("Read", { exact: true })
            .check();
        if (name === "Warehouse")
          await page.getByRole("group", { name: "Products" }).getByLabel("Read and update").check();
        if (name === "Reports")
          await page.getByRole("group", { name: "Expires" }).getByLabel("90 days").check();
        await createKey(name, access[i]);
        expect(page.url()).toBe(`${origin()}/api/admin/keys/new`);
      }
      await page.goto(`${origin()}/api/admin/`);
      expect(await page.getByText("5 of 5 active keys in use.").count()).toBe(1);
      expect(await page.getByText(LIMIT_SENTENCE).count()).toBe(1);
      const shot = join(OUTPUT_DIR, "admin-screen.png");
      await page.screenshot({ path: shot, fullPage: true });
      if (process.env.STOREAPI_UPDATE_SCREENSHOT === "1")
        copyFileSync(shot, join(ROOT, "docs/admin-screen.png"));
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(OUTPUT_DIR, "admin-screen-phone.png"), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });

      await page.getByRole("group", { name: "Leads" }).getByLabel("Read", { exact: true }).check();
      await page.getByLabel("Name", { exact: true }).fill("Sixth");
      const refused = page.waitForResponse((r) => r.url().endsWith("/api/admin/keys"));
      await page.getByRole("button", { name: "Create key" }).click();
      expect((await refused).status()).toBe(409);
      expect(await page.getByRole("alert").textContent()).toBe(LIMIT_SENTENCE);
      // The refused form's first field has the focus, and the error is its description.
      await page.waitForLoadState();
      expect(
        await page.evaluate(() => [
          document.activeElement?.id,
          document.activeElement?.getAttribute("aria-describedby"),
        ]),
      ).toEqual(["key-name", "page-error"]);
    },
    SLOW,
  );

  test(
    "a link followed from another site (the host's panel, webmail) signs in and shows the screen",
    async () => {
      // SameSite=Strict: the cookie set by the link's answer is not sent on the redirect
      // that follows it, nor on any request of a navigation that began on another site.
      await context.clearCookies();
      const link = await signInWithCliLink();
      await page.goto(`http://127.0.0.1:${evil.port}/hand-over?to=${encodeURIComponent(link)}`);
      await page.getByRole("link", { name: "Manage API keys" }).click();
      // (the screen's own address at once, then the screen from there)
      await page.getByRole("button", { name: "Create key" }).waitFor();
      expect(page.url()).toBe(`${origin()}/api/admin/`);
      // Signed in already, a link to the screen from elsewhere shows it too.
      await page.goto(
        `http://127.0.0.1:${evil.port}/hand-over?to=${encodeURIComponent(`${origin()}/api/admin/`)}`,
      );
      await page.getByRole("link", { name: "Manage API keys" }).click();
      await page.getByRole("button", { name: "Create key" }).waitFor();
      expect(page.url()).toBe(`${origin()}/api/admin/`);
      // Without a session the same way leads to the sign-in form.
      await context.clearCookies();
      await page.goto(
        `http://127.0.0.1:${evil.port}/hand-over?to=${encodeURIComponent(`${origin()}/api/admin/`)}`,
      );
      await page.getByRole("link", { name: "Manage API keys" }).click();
      await page.waitForURL(`${origin()}/api/admin/sign-in`);
      await page.getByRole("button", { name: "Email me a sign-in link" }).waitFor();
    },
    SLOW,
  );

  test(
    "the key table fits the window, phone to desktop and 200% zoom, also with a 100-character name",
    async () => {
      const data = join(dir, "data");
      const longName = "ERP_SYNC_PRODUCTION_WAREHOUSE_".repeat(4).slice(0, 100);
      for (const name of [longName, "reports"]) {
        const made = await runCli(
          [
            ...["keys", "create", "shop2", "--name", name, "--products", "read"],
            ...["--expires", "1y", "--data", data], // a date in its Expires column
          ],
          { underTest: true },
        );
        expect(made.code).toBe(0);
      }
      const shop2 = `http://shop2.localhost:${port}`;
      const link = await runCli(
        ["admin-link", "shop2", "--origin", shop2, "--json", "--data", data],
        { underTest: true },
      );
      await page.goto(JSON.parse(link.stdout).url);
      expect(page.url()).toBe(`${shop2}/api/admin/`);
      // 960 CSS pixels: a 1920-pixel screen at 200%.
      for (const [width, height] of [
        [375, 667],
        [800, 600],
        [960, 800],
        [1040, 800],
        [1160, 800],
        [1280, 900],
      ]) {
        await page.setViewportSize({ width, height });
        const widest = await page.evaluate(() => document.documentElement.scrollWidth);
        const deleteButtons = page.getByRole("button", { name: "Delete", exact: true });
        expect(await deleteButtons.count()).toBe(2);
        const rights = await deleteButtons.evaluateAll((buttons) =>
          buttons.map((button) => Math.ceil(button.getBoundingClientRect().right)),
        );
        expect([width, widest <= width, rights.every((right) => right <= width)]).toEqual([
          width,
          true,
          true,
        ]);
      }
      await page.setViewportSize({ width: 1280, height: 900 });
    },
    SLOW,
  );

  test(
    "a foreign store's link does not sign in",
    async () => {
      // A link made for shop2, opened on shop1's host.
      const response = await page.goto(await signInWithCliLink("shop2"));
      expect(response?.status()).toBe(400);
      expect(await page.getByRole("alert").textContent()).toBe(BAD_LINK);
    },
    SLOW,
  );

  test(
    "a form posted from another origin is refused (403)",
    async () => {
      // Signed in, then a page elsewhere submits to the screen.
      await page.goto(await signInWithCliLink());
      expect(page.url()).toBe(`${origin()}/api/admin/`);
      await page.goto(`http://127.0.0.1:${evil.port}/`);
      const answer = page.waitForResponse((r) => r.url().endsWith("/api/admin/keys"));
      await page.getByRole("button", { name: "Go" }).click();
      expect((await answer).status()).toBe(403);
      expect(await page.getByRole("alert").textContent()).toBe(
        "This form was not sent from this page; reload the page and try again.",
      );
      writeFileSync(join(OUTPUT_DIR, "cross-origin.html"), await page.content());
    },
    SLOW,
  );
});
