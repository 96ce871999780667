import { afterAll, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadFixture } from "../src/load/load";
import { tempDir, testStore } from "./helpers";
import { runCli, spawnUntil } from "./process";
import { TEST_LIBSQL } from "./sqld";

const dir = tempDir("storeapi-demo-visible-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the demo writes the emails it sends into demo-data/mail and says so at start", async () => {
  const data = join(dir, "demo-data");
  const { child, text } = await spawnUntil(
    ["demo", "--listen", "127.0.0.1:0", "--data", data],
    "Stop with Ctrl-C",
  );
  try {
    expect(text).toContain(
      `\nEmails the demo sends are written to ${join(data, "mail")}/ (one .eml file each).\n`,
    );
    // The demo's PATCH line: ship an order and notify the customer.
    const patch = text.split("\n").find((line) => line.includes("-X PATCH")) ?? "";
    const [, url] = /(http:\/\/\S+)/.exec(patch) ?? [];
    const [, key] = /Bearer (\S+)"/.exec(patch) ?? [];
    const [, body] = /-d '([^']+)'/.exec(patch) ?? [];
    const host = new URL(url).host;
    const answer = await fetch(url.replace(host, `127.0.0.1:${new URL(url).port}`), {
      method: "PATCH",
      headers: { Host: host, Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body,
    });
    expect(answer.status).toBe(200);
    let files: string[] = [];
    for (let i = 0; i < 100 && files.length === 0; i++) {
      await Bun.sleep(100);
      files = readdirSync(join(data, "mail"), { recursive: false })
        .map(String)
        .filter((f) => f.endsWith(".eml"));
    }
    expect(files).toHaveLength(1);
  } finally {
    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
  }
}, 60_000);

test("the demo's store addresses and curl lines follow --platform-domain", async () => {
  const data = join(dir, "demo-platform-domain");
  const { child, text } = await spawnUntil(
    ["demo", "--listen", "127.0.0.1:0", "--data", data, "--platform-domain", "stores.test"],
    "Stop with Ctrl-C",
  );
  try {
    const urls = [...text.matchAll(/https?:\/\/[^\s"]+/g)].map(([url]) => new URL(url));
    const storeUrls = urls.filter(
      (url) => url.pathname.startsWith("/api/v1") && url.hostname !== "127.0.0.1",
    );
    expect(storeUrls.length).toBeGreaterThanOrEqual(6); // three stores listed, three curl lines
    for (const url of storeUrls) expect(url.hostname).toMatch(/^[a-z0-9-]+\.stores\.test$/);
    const orders = text.split("\n").find((line) => line.includes("/orders?limit=2")) ?? "";
    const [, target] = /"(http:\/\/[^"]+)"/.exec(orders) ?? [];
    const [, key] = /Bearer (\S+)"/.exec(orders) ?? [];
    const url = new URL(target);
    const answer = await fetch(`http://127.0.0.1:${url.port}${url.pathname}${url.search}`, {
      headers: { Host: url.host, Authorization: `Bearer ${key}` },
    });
    expect(answer.status).toBe(200);
  } finally {
    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
  }
}, 60_000);

test("the demo logs no request lines unless asked, by flag or environment, and its help says so", async () => {
  const help = await runCli(["demo", "--help"]);
  expect(help.stdout).toContain(
    "  --log-level L                debug, info, warn, error, silent (default warn: no line per request); env STOREAPI_LOG_LEVEL\n",
  );
  expect(help.stdout).toContain(
    "  --data DIR                   the demo's data directory, emptied at every demo start (default ./demo-data)\n",
  );
  for (const [env, logged] of [
    [{}, false],
    [{ STOREAPI_LOG_LEVEL: "info" }, true],
  ] as const) {
    const { child, text, rest } = await spawnUntil(
      ["demo", "--listen", "127.0.0.1:0", "--data", join(dir, "demo-log-level")],
      "Stop with Ctrl-C",
      env,
    );
    const [, base] = /Reference: (http:\/\/127\.0\.0\.1:\d+)/.exec(text) ?? [];
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
    expect([env, (await rest()).includes('"path":"/healthz"')]).toEqual([env, logged]);
  }
}, 60_000);

// Spawns serve itself on files, after a load the switch would send to sqld.
test.skipIf(TEST_LIBSQL)(
  "serve --listen HOST:0 prints the chosen URL whatever the log level",
  async () => {
    const data = join(dir, "data");
    await loadFixture(data, { stores: [testStore()] });
    for (const level of ["silent", "error"]) {
      const { child, text } = await spawnUntil(
        ["serve", "--data", data, "--listen", "127.0.0.1:0", "--allow-http", "--log-level", level],
        "\n",
      );
      try {
        const line = JSON.parse(text.split("\n")[0]);
        expect(line).toMatchObject({ level: "info", msg: "listening", dataDir: data });
        expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect((await fetch(`${line.url}/healthz`)).status).toBe(200);
      } finally {
        child.kill("SIGTERM");
        expect(await child.exited).toBe(0);
      }
    }
  },
  60_000,
);
