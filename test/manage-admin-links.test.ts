import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers";
import { dataDirIn, manage, newHostKey, storeBody } from "./manage-support";
import { runCli, type ServerProcess, spawnServer } from "./process";
import { TEST_LIBSQL } from "./sqld";

// Each test starts CLI processes or waits for a reload: on a loaded machine that takes seconds.
setDefaultTimeout(60_000);

let dir: string;
let server: ServerProcess;
let hostKey: string;

beforeAll(async () => {
  dir = tempDir("storeapi-manage-links-");
  hostKey = await newHostKey(dataDirIn(dir));
  server = await spawnServer(dataDirIn(dir));
  await manage(server.url, "POST", "/stores", { key: hostKey, body: storeBody("shop1") });
});

afterAll(async () => {
  await server?.signal("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

/** Admin links live in the store's own database (src/admin/links.ts). */
const storedLinks = () => {
  const db = new Database(join(dataDirIn(dir), "stores", "shop1.db"), { readonly: true });
  try {
    return db
      .query("SELECT digest, expires_at - created_at AS ttl, used_at FROM admin_links")
      .all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
};

// Reads the stored link digests from the store file.
test.skipIf(TEST_LIBSQL)(
  "POST .../admin-links: a 15-minute one-time link on the store's own domain, or the origin given; only the digest is stored",
  async () => {
    const noBody = await manage(server.url, "POST", "/stores/shop1/admin-links", { key: hostKey });
    expect(noBody.status).toBe(201);
    const link = noBody.json.data;
    expect(link.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(link.url).toBe(`https://shop1.example.com/api/admin/sign-in?token=${link.token}`);
    expect(link.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[23]:00$/);

    const local = await manage(server.url, "POST", "/stores/shop1/admin-links", {
      key: hostKey,
      body: { origin: "http://shop1.localhost:8080" },
    });
    expect(local.status).toBe(201);
    expect(local.json.data.url).toBe(
      `http://shop1.localhost:8080/api/admin/sign-in?token=${local.json.data.token}`,
    );
    expect(local.json.data.token).not.toBe(link.token);

    const rows = storedLinks();
    expect(rows).toHaveLength(2);
    const digests = rows.map((r) => r.digest);
    expect(digests).toContain(createHash("sha256").update(link.token).digest("hex"));
    expect(JSON.stringify(rows)).not.toContain(link.token);
    expect(rows.every((r) => r.ttl === 15 * 60_000 && r.used_at === null)).toBe(true);

    for (const origin of ["http://127.0.0.1:8080", "http://[::1]:8080"]) {
      const ip = await manage(server.url, "POST", "/stores/shop1/admin-links", {
        key: hostKey,
        body: { origin },
      });
      expect([ip.status, ip.json.data.url]).toEqual([
        201,
        `${origin}/api/admin/sign-in?token=${ip.json.data.token}`,
      ]);
    }

    const badOrigins = [
      "ftp://x.example.com",
      "https://x.example.com/path",
      "not a url",
      5,
      "http://a..b",
      "https://-x.example.com",
      `https://${"a".repeat(64)}.example.com`,
      `https://${"a.".repeat(127)}com`, // 257 characters
    ];
    for (const origin of badOrigins) {
      const bad = await manage(server.url, "POST", "/stores/shop1/admin-links", {
        key: hostKey,
        body: { origin },
      });
      expect(bad.status).toBe(400);
      expect(bad.json.error).toMatchObject({ code: "invalid_field", field: "origin" });
    }
    expect(
      (await manage(server.url, "POST", "/stores/nope/admin-links", { key: hostKey, body: {} }))
        .status,
    ).toBe(404);
    expect(
      (await manage(server.url, "POST", "/stores/shop1/admin-links", { key: null, body: {} }))
        .status,
    ).toBe(401);
  },
);

test("storeapi admin-link SLUG [--origin URL] [--json]", async () => {
  const data = dataDirIn(dir);
  const json = await runCli([
    "admin-link",
    "shop1",
    "--origin",
    "http://shop1.localhost:8080",
    "--json",
    "--data",
    data,
  ]);
  expect(json.code).toBe(0);
  expect(Object.keys(json.json).sort()).toEqual(["expiresAt", "token", "url"]);
  expect(json.json.url).toBe(
    `http://shop1.localhost:8080/api/admin/sign-in?token=${json.json.token}`,
  );
  const text = await runCli(["admin-link", "shop1", "--data", data]);
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(
    /^https:\/\/shop1\.example\.com\/api\/admin\/sign-in\?token=[A-Za-z0-9_-]{43}\n$/,
  );
  expect(text.stderr).toMatch(/^One use, valid until .+\.\n$/);
  const unknown = await runCli(["admin-link", "nope", "--data", data]);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toBe('storeapi: no store "nope"\n');
  expect((await runCli(["admin-link", "shop1", "--origin", "ftp://x", "--data", data])).code).toBe(
    2,
  );
});
