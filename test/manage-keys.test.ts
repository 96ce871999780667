import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { LIMIT_SENTENCE } from "../src/admin/pages";
import { AdminClient } from "./admin-support";
import { tempDir } from "./helpers";
import { parseMessage } from "./mail-support";
import { dataDirIn, manage, newHostKey, storeBody } from "./manage-support";
import { type ServerProcess, spawnServer } from "./process";
import { TEST_LIBSQL } from "./sqld";

// Each test starts CLI processes or waits for a reload: on a loaded machine that takes seconds.
setDefaultTimeout(60_000);

let dir: string;
let data: string;
let mailDir: string;
let server: ServerProcess;
let hostKey: string;

beforeAll(async () => {
  dir = tempDir("storeapi-manage-keys-api-");
  data = dataDirIn(dir);
  mailDir = join(dir, "mail");
  hostKey = await newHostKey(data);
  server = await spawnServer(data, ["--mail-dir", mailDir]);
});

afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown) =>
  manage(server.url, method, path, { key: hostKey, body });
const storeApi = (host: string, key: string, path = "/orders") =>
  fetch(`${server.url}/api/v1${path}`, { headers: { Host: host, Authorization: `Bearer ${key}` } });

/** The mail files of one store whose subject line contains `subject`. */
function mails(slug: string, subject: string): string[] {
  let files: string[] = [];
  try {
    files = readdirSync(mailDir).filter((f) => f.startsWith(slug) && f.endsWith(".eml"));
  } catch {
    return [];
  }
  return files
    .map((f) => readFileSync(join(mailDir, f), "utf8"))
    .filter((m) => m.includes(subject));
}

async function waitForMails(slug: string, subject: string, count: number): Promise<string[]> {
  for (let i = 0; i < 100 && mails(slug, subject).length < count; i++) await Bun.sleep(100);
  return mails(slug, subject);
}

/** What the clock passing the grace does: the old key's expiry moves into the past (and the server reloads keys). */
function passGrace(slug: string, keyId: number) {
  // The server may be writing the same databases (key usage, mail): wait for the lock like it does.
  const store = new Database(join(data, "stores", `${slug}.db`));
  store.run("PRAGMA busy_timeout = 5000");
  store.run("UPDATE api_keys SET expires_at = ? WHERE id = ?", [Date.now() - 1000, keyId]);
  store.close();
  const platform = new Database(join(data, "platform.db"));
  platform.run("PRAGMA busy_timeout = 5000");
  platform.run("UPDATE stores SET keys_version = keys_version + 1 WHERE slug = ?", [slug]);
  platform.close();
}

describe("a store's keys", () => {
  test("a year's key ends on the same Israel date and time a year on", async () => {
    expect((await call("POST", "/stores", storeBody("year1"))).status).toBe(201);
    const yearly = await call("POST", "/stores/year1/keys", {
      name: "yearly",
      permissions: { leads: "read" },
      expires: "1y",
    });
    const { createdAt, expiresAt } = yearly.json.data as { createdAt: string; expiresAt: string };
    // On 29 February it ends on 1 March (src/format/time.test.ts); on any other day:
    const nextYear = `${Number(createdAt.slice(0, 4)) + 1}${createdAt.slice(4, 19)}`;
    if (createdAt.slice(5, 10) !== "02-29") expect(expiresAt.slice(0, 19)).toBe(nextYear);
  });

  test("create, list, plan_limit, delete, and bad input", async () => {
    expect((await call("POST", "/stores", storeBody("k1"))).status).toBe(201);
    const made = await call("POST", "/stores/k1/keys", {
      name: "ERP",
      permissions: { orders: "write" },
      expires: "30d",
    });
    expect(made.status).toBe(201);
    expect(made.json.data).toEqual({
      id: 1,
      name: "ERP",
      hint: `svc_sk_…${made.json.data.key.slice(-4)}`,
      permissions: { products: "none", orders: "write", customers: "none", leads: "none" },
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
      lastUsedAt: null,
      status: "active",
      key: expect.stringMatching(/^svc_sk_[A-Za-z0-9]{40}$/),
    });
    expect((await storeApi("k1.example.com", made.json.data.key)).status).toBe(200);
    // 30 days are 30 × 24 hours.
    const { createdAt, expiresAt } = made.json.data;
    expect(Date.parse(expiresAt) - Date.parse(createdAt)).toBe(30 * 24 * 60 * 60 * 1000);

    for (let i = 2; i <= 5; i++)
      expect(
        (await call("POST", "/stores/k1/keys", { name: `k${i}`, permissions: { leads: "read" } }))
          .status,
      ).toBe(201);
    const sixth = await call("POST", "/stores/k1/keys", {
      name: "six",
      permissions: { leads: "read" },
    });
    expect(sixth.status).toBe(409);
    expect(sixth.json.error.code).toBe("plan_limit");

    const deleted = await call("DELETE", "/stores/k1/keys/1");
    expect(deleted.status).toBe(200);
    expect(deleted.json.data).toMatchObject({ id: 1, status: "deleted" });
    expect(deleted.json.data.key).toBeUndefined();
    expect((await storeApi("k1.example.com", made.json.data.key)).status).toBe(401);
    expect((await call("DELETE", "/stores/k1/keys/1")).status).toBe(404);
    expect((await call("DELETE", "/stores/k1/keys/99")).status).toBe(404);

    const listed = await call("GET", "/stores/k1/keys");
    expect(listed.json.data.map((k: { id: number; status: string }) => [k.id, k.status])).toEqual([
      [2, "active"],
      [3, "active"],
      [4, "active"],
      [5, "active"],
      [1, "deleted"],
    ]);
    expect(listed.text).not.toContain(`svc_sk_${made.json.data.key.slice(7)}`);

    const bad: Array<[unknown, string]> = [
      [{ name: "x", permissions: {} }, "permissions"],
      [{ name: "x", permissions: { orders: "admin" } }, "permissions.orders"],
      [{ name: "x", permissions: { stock: "read" } }, "permissions.stock"],
      [{ name: "x", permissions: { orders: "read" }, expires: "2d" }, "expires"],
      [{ permissions: { orders: "read" } }, "name"],
      [{ name: "   ", permissions: { orders: "read" } }, "name"], // as the CLI and the screen refuse it
    ];
    for (const [body, field] of bad) {
      const answer = await call("POST", "/stores/k1/keys", body);
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({ code: "invalid_field", field });
    }
    expect((await call("DELETE", "/stores/k1/keys/abc")).json.error).toMatchObject({
      code: "invalid_parameter",
      field: "id",
    });
    expect((await call("GET", "/stores/none/keys")).status).toBe(404);
    expect(
      (await call("POST", "/stores/k1/keys/2/roll", { grace: "2h" })).json.error,
    ).toMatchObject({ code: "invalid_field", field: "grace" });
  });

  test("a store deleted and made again under its slug leaves the first store's delivered mail files alone", async () => {
    expect((await call("POST", "/stores", storeBody("k9"))).status).toBe(201);
    const keyBody = (name: string) => ({ name, permissions: { leads: "read" } });
    expect((await call("POST", "/stores/k9/keys", keyBody("first-store-key"))).status).toBe(201);
    expect(await waitForMails("k9", "first-store-key", 1)).toHaveLength(1);

    expect((await call("DELETE", "/stores/k9")).status).toBe(200);
    expect((await call("POST", "/stores", storeBody("k9"))).status).toBe(201);
    expect((await call("POST", "/stores/k9/keys", keyBody("second-store-key"))).status).toBe(201);
    expect(await waitForMails("k9", "second-store-key", 1)).toHaveLength(1);
    // Both stores' first outbox row has id 1; the second's file must not replace the first's.
    expect(mails("k9", "first-store-key")).toHaveLength(1);
  });

  test("rolling a fifth active key works; rolling a deleted or expired key is key_inactive", async () => {
    expect((await call("POST", "/stores", storeBody("k2"))).status).toBe(201);
    for (let i = 1; i <= 5; i++)
      await call("POST", "/stores/k2/keys", { name: `k${i}`, permissions: { orders: "read" } });
    const rolled = await call("POST", "/stores/k2/keys/5/roll", { grace: "24h" });
    expect(rolled.status).toBe(201);
    expect(rolled.json.data).toMatchObject({
      id: 6,
      name: "k5",
      status: "active",
      permissions: { orders: "read" },
      expiresAt: null,
    });
    expect(
      (await call("POST", "/stores/k2/keys", { name: "more", permissions: { orders: "read" } }))
        .json.error.code,
    ).toBe("plan_limit");
    const now = await call("POST", "/stores/k2/keys/6/roll", { grace: "now", expires: "90d" });
    expect(now.status).toBe(201);
    expect(now.json.data.expiresAt).not.toBeNull();
    const inactive = await call("POST", "/stores/k2/keys/6/roll", { grace: "now" });
    expect(inactive.status).toBe(409);
    expect(inactive.json.error.code).toBe("key_inactive");
    // Rolled again in its grace, key 5 would leave its first replacement a key of its own.
    const again = await call("POST", "/stores/k2/keys/5/roll", { grace: "1h" });
    expect([again.status, again.json.error.code]).toEqual([409, "key_inactive"]);
    expect(again.json.error.message).toBe(
      "Key 5 was already rolled and works only until its grace ends; roll key 7 instead.",
    );
    // Its replacements gone, key 5 (24 h of grace left) is an active key of its own again.
    expect((await call("DELETE", "/stores/k2/keys/7")).status).toBe(200);
    const orphan = await call("POST", "/stores/k2/keys/5/roll", { grace: "1h" });
    expect(orphan.json.error.message).toBe(
      "Key 5 was already rolled and works only until its grace ends; its replacement, key 7, is deleted or expired: create a new key.",
    );
    expect(
      (await call("POST", "/stores/k2/keys", { name: "more", permissions: { orders: "read" } }))
        .json.error.code,
    ).toBe("plan_limit");
    await call("DELETE", "/stores/k2/keys/1");
    expect((await call("POST", "/stores/k2/keys/1/roll", { grace: "1h" })).json.error.code).toBe(
      "key_inactive",
    );
  });

  test("the admin screen counts a rolled key and its replacement as one, as the limit does", async () => {
    expect((await call("POST", "/stores", storeBody("k3"))).status).toBe(201);
    for (let i = 1; i <= 4; i++)
      await call("POST", "/stores/k3/keys", { name: `k${i}`, permissions: { orders: "read" } });
    expect((await call("POST", "/stores/k3/keys/1/roll", { grace: "1h" })).status).toBe(201);
    const link = await call("POST", "/stores/k3/admin-links", { origin: "http://k3.example.com" });
    const admin = new AdminClient(server.url, "k3.example.com");
    expect((await admin.signIn(link.json.data.token)).status).toBe(303);
    const screen = await admin.get("/api/admin/");
    expect(screen.text).toContain("4 of 5 active keys in use.");
    expect(screen.text).not.toContain(LIMIT_SENTENCE);
    // Both keys of the pair work until the grace ends, so both are listed with a Delete button.
    expect(screen.text.match(/>k1</g)?.length).toBe(2);
    expect(screen.text).toContain('aria-describedby="key-1-name"');

    const fifth = await admin.post("/api/admin/keys", { name: "fifth", orders: "read" });
    expect(fifth.status).toBe(303);
    const full = await admin.get("/api/admin/");
    expect(full.text).toContain("5 of 5 active keys in use.");
    expect(full.text).toContain(LIMIT_SENTENCE);
    expect((await admin.post("/api/admin/keys", { name: "sixth", orders: "read" })).status).toBe(
      409,
    );

    // The replacement rolled in turn, then deleted: the family's two keys in their grace
    // (both still work) count as one between them, not one each.
    const third = await call("POST", "/stores/k3/keys/5/roll", { grace: "1h" });
    expect(third.status).toBe(201);
    expect((await call("DELETE", `/stores/k3/keys/${third.json.data.id}`)).status).toBe(200);
    expect((await admin.get("/api/admin/")).text).toContain("5 of 5 active keys in use.");
    expect(
      (await call("POST", "/stores/k3/keys", { name: "six", permissions: { orders: "read" } }))
        .status,
    ).toBe(409);
  });
});

// Moves a key's expiry by writing the store file directly.
describe.skipIf(TEST_LIBSQL)("a host's day", () => {
  test("create store → key → store API → checkout orders → the key lists them → roll with 1h grace → after it only the new → delete → 401; the owner's emails arrive once each", async () => {
    expect(
      (await call("POST", "/stores", storeBody("day", { ownerEmail: "owner@day.example.com" })))
        .status,
    ).toBe(201);
    const key = (
      await call("POST", "/stores/day/keys", {
        name: "Storefront",
        permissions: { orders: "read", leads: "write" },
      })
    ).json.data;
    expect((await storeApi("day.example.com", key.key)).status).toBe(200);
    expect((await storeApi("day.localhost", key.key)).status).toBe(200);
    for (const number of [1, 2])
      expect(
        (await call("POST", "/stores/day/orders", { number, status: 1, total: 10 })).status,
      ).toBe(201);
    const orders = (await (await storeApi("day.example.com", key.key)).json()) as any;
    expect(orders.data.map((o: { number: number }) => o.number)).toEqual([2, 1]);

    const rolled = await call("POST", `/stores/day/keys/${key.id}/roll`, { grace: "1h" });
    expect(rolled.status).toBe(201);
    const replacement = rolled.json.data;
    expect((await storeApi("day.example.com", key.key)).status).toBe(200);
    expect((await storeApi("day.example.com", replacement.key)).status).toBe(200);
    const during = (await call("GET", "/stores/day/keys")).json.data;
    expect(during.map((k: { id: number; status: string }) => [k.id, k.status])).toEqual([
      [key.id, "active"],
      [replacement.id, "active"],
    ]);

    passGrace("day", key.id);
    await Bun.sleep(1000);
    expect((await storeApi("day.example.com", key.key)).status).toBe(401);
    expect((await storeApi("day.example.com", replacement.key)).status).toBe(200);
    const after = (await call("GET", "/stores/day/keys")).json.data;
    expect(after.map((k: { id: number; status: string }) => [k.id, k.status])).toEqual([
      [replacement.id, "active"],
      [key.id, "expired"],
    ]);
    expect(after[0].lastUsedAt).not.toBeNull();

    const deletion = await call("DELETE", `/stores/day/keys/${replacement.id}`);
    // The answer shows the key's last use as the list did (it said null: the use is in platform.db).
    expect([deletion.status, deletion.json.data.lastUsedAt]).toEqual([200, after[0].lastUsedAt]);
    expect((await storeApi("day.example.com", replacement.key)).status).toBe(401);

    const created = await waitForMails("day", "created for", 2);
    const deleted = await waitForMails("day", "deleted for", 1);
    await Bun.sleep(500); // nothing more arrives
    expect(mails("day", "created for")).toHaveLength(2);
    expect(deleted).toHaveLength(1);
    // The roll's notice names the key it replaces and when that one stops (it said only "created").
    const replacing = created
      .map((raw) => parseMessage(raw).text)
      .filter((text) => text.includes(`replacing key ${key.hint}, which works until 20`));
    expect(replacing).toHaveLength(1);
    expect(replacing[0]).toContain(`Replaces: ${key.hint} (works until 20`);
    for (const mail of [...created, ...deleted]) {
      expect(mail).toContain("To: owner@day.example.com");
      expect(mail).not.toContain(key.key);
      expect(mail).not.toContain(replacement.key);
    }
  });
});
