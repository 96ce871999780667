import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Platform } from "./db/platform";
import { StoreRegistry } from "./registry";

const settings = { manualCustomerApproval: false, notifyStatusChange: true, registration: true };

let dir: string;
let platform: Platform;
let registry: StoreRegistry;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "storeapi-registry-"));
  platform = await Platform.open(dir);
  await platform.addStore({
    slug: "shop1",
    name: "S",
    domain: "Shop1.Example.com",
    plan: "growth",
    ownerEmail: "o@x.test",
    settings,
  });
  registry = new StoreRegistry(platform, "localhost");
  await registry.load();
});
afterAll(async () => {
  await platform.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("StoreRegistry.resolveHost", () => {
  test("own domain or {slug}.{platform domain}; port ignored; any case", () => {
    for (const host of [
      "shop1.example.com",
      "SHOP1.EXAMPLE.COM:443",
      "shop1.localhost",
      "Shop1.LocalHost:8080",
      "shop1.example.com.",
      "shop1.localhost.:8080",
      "shop1.localhost:",
    ]) {
      expect([host, registry.resolveHost(host)?.slug]).toEqual([host, "shop1"]);
    }
  });

  test("anything else is no store", () => {
    for (const host of [
      undefined,
      "",
      "localhost",
      "example.com",
      "x.shop1.localhost",
      "shop1.localhost.evil",
      "[::1]:8080",
      "shop2.localhost",
      ".localhost",
      "shop1.example.com..",
      "localhost.",
      "shop1.localhost:abc",
      "shop1.example.com:80x",
      "shop1.example.com:-1",
      "[::1]x",
      "[::1",
      ":8080",
    ]) {
      expect([host, registry.resolveHost(host)]).toEqual([host, undefined]);
    }
  });
});

describe("StoreRegistry reload", () => {
  test("a commit from another connection is picked up by refreshIfChanged; nothing else reloads", async () => {
    const other = await Platform.open(dir);
    try {
      const before = registry.get("shop1")?.keysVersion ?? -1;
      await registry.refreshIfChanged();
      expect(registry.get("shop1")?.keysVersion).toBe(before);
      await other.bumpKeysAndMail("shop1");
      await registry.refreshIfChanged();
      expect(registry.get("shop1")?.keysVersion).toBe(before + 1);
    } finally {
      await other.close();
    }
  });
});

describe("StoreRegistry.load", () => {
  test("a slow load started first never overwrites a later one (loads run in order)", async () => {
    const store = (slug: string) => ({
      slug,
      name: slug,
      domain: `${slug}.test`,
      plan: "growth",
      ownerEmail: "o@x.test",
      settings,
      keysVersion: 0,
      mailVersion: 0,
      createdAt: 0,
    });
    const answers = [
      { delayMs: 50, stores: [store("old")] },
      { delayMs: 0, stores: [store("old"), store("new")] },
    ];
    let calls = 0;
    const fake = {
      dataVersion: async () => 1,
      listStores: async () => {
        const answer = answers[Math.min(calls++, answers.length - 1)];
        await Bun.sleep(answer.delayMs);
        return answer.stores;
      },
    } as unknown as Platform;
    const fresh = new StoreRegistry(fake, "localhost");
    await Promise.all([fresh.load(), fresh.load()]);
    expect(fresh.get("new")?.slug).toBe("new");
  });
});
