import { expect, test } from "bun:test";
import type { Platform } from "./db/platform";
import { keyChanges } from "./deps";
import type { KeyCache } from "./keys/cache";
import type { StoreRegistry } from "./registry";

/** A platform whose bumps answer as told, and what happened, in order. */
function parts(bumps: Array<"ok" | "locked">) {
  const events: string[] = [];
  const platform = {
    bumpKeysAndMail: async (slug: string) => {
      const outcome = bumps.shift();
      events.push(`bump ${slug} ${outcome}`);
      if (outcome === "locked") throw new Error("platform.db is locked by another process");
    },
  } as unknown as Platform;
  const registry = { load: async () => void events.push("reload") } as unknown as StoreRegistry;
  const keys = {
    forget: (slug: string) => void events.push(`forget ${slug}`),
  } as unknown as KeyCache;
  const report = (message: string) => void events.push(`error: ${message}`);
  const mark = async (slug: string) => void events.push(`mark ${slug}`);
  return { events, change: keyChanges(platform, registry, keys, mark, report) };
}

test("a key change is made between two bumps, the store marked for its notice first; then this server forgets the store's keys", async () => {
  const { events, change } = parts(["ok", "ok"]);
  expect(await change("shop1", async () => events.push("change") && "made")).toBe("made");
  expect(events).toEqual([
    "mark shop1",
    "bump shop1 ok",
    "change",
    "bump shop1 ok",
    "forget shop1",
    "reload",
  ]);
});

test("platform.db locked at the first bump: nothing is changed", async () => {
  const { events, change } = parts(["locked"]);
  await expect(change("shop1", async () => events.push("change"))).rejects.toThrow("locked");
  expect(events).toEqual(["mark shop1", "bump shop1 locked"]);
});

test("locked at the second bump: the change holds, is answered, and this server forgets the keys", async () => {
  const { events, change } = parts(["ok", "locked"]);
  expect(await change("shop1", async () => events.push("change") && "made")).toBe("made");
  expect(events).toEqual([
    "mark shop1",
    "bump shop1 ok",
    "change",
    "bump shop1 locked",
    `error: the keys of store "shop1" changed, but platform.db could not record it; other processes see the change at the store's next key change`,
    "forget shop1",
    "reload",
  ]);
});
