/**
 * The compiled binary, copied to a temp dir outside the repo (no node_modules reachable),
 * run there with a bare environment: libSQL's native module and the demo fixture must be
 * inside it. Builds its own copy (a second or so), so it does not depend on ./storeapi.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "../scripts/build";
import { tempDir } from "./helpers";

const DEMO_KEY = "svc_sk_demoShop1AllAccess000000000000000001";
let dir = "";
let bin = "";

/** No PATH to bun or node, no NODE_PATH: only what the binary carries. */
const bareEnv = (extra: Record<string, string> = {}) => ({
  PATH: "/usr/bin:/bin",
  HOME: dir,
  ...extra,
});

async function run(args: string[], extra: Record<string, string> = {}) {
  const child = Bun.spawn([bin, ...args], {
    cwd: dir,
    env: bareEnv(extra),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}

/** Starts `serve` on a free loopback port; resolves with its URL from the "listening" log line. */
async function serve(extra: Record<string, string> = {}) {
  const child = Bun.spawn(
    [bin, "serve", "--data", "data", "--listen", "127.0.0.1:0", "--allow-http"],
    {
      cwd: dir,
      env: bareEnv(extra),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      timeout: 60_000,
    },
  );
  const reader = child.stdout.getReader();
  let text = "";
  let url: string | undefined;
  while (!url) {
    const { value, done } = await reader.read();
    if (done)
      throw new Error(
        `server exited before listening: ${text} ${await new Response(child.stderr).text()}`,
      );
    text += new TextDecoder().decode(value);
    url = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(text)?.[1];
  }
  // keep draining the log so the server never blocks on a full pipe
  (async () => {
    while (!(await reader.read()).done) {}
  })().catch(() => {});
  return { url, child };
}

beforeAll(async () => {
  dir = tempDir("storeapi-bin-");
  bin = join(dir, "storeapi");
  await build(bin);
  copyFileSync(join(import.meta.dir, "..", "fixtures", "demo.json"), join(dir, "fixture.json"));
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the binary outside the repo", () => {
  test("creates a store and a key (native driver) and lists them (client driver)", async () => {
    const added = await run([
      "stores",
      "add",
      "acme",
      "--domain",
      "acme.example.com",
      "--plan",
      "growth",
      "--owner-email",
      "o@acme.example.com",
      "--data",
      "data",
    ]);
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    const key = await run([
      "keys",
      "create",
      "acme",
      "--name",
      "erp",
      "--orders",
      "read",
      "--json",
      "--data",
      "data",
    ]);
    expect(key.code).toBe(0);
    expect(JSON.parse(key.stdout).key).toMatch(/^svc_sk_/);
    const list = await run(["stores", "list", "--json", "--data", "data"], {
      STOREAPI_DRIVER: "client",
    });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).map((s: { slug: string }) => s.slug)).toEqual(["acme"]);
  });

  test("loads a fixture, serves it, answers /healthz and an API call, stops on SIGTERM with exit 0, nothing on stderr", async () => {
    const loaded = await run(["load", "fixture.json", "--data", "data"]);
    expect(loaded.code).toBe(0);
    const { url, child } = await serve();
    try {
      const health = await fetch(`${url}/healthz`);
      expect(await health.json()).toEqual({ ok: true, data: { status: "ok" } });
      const answer = await fetch(`${url}/api/v1/customers?limit=1`, {
        headers: { Host: "shop1.localhost", Authorization: `Bearer ${DEMO_KEY}` },
      });
      const body = await answer.json();
      expect(answer.status).toBe(200);
      expect(body.ok).toBe(true);
      expect(body.data).toHaveLength(1);
      const free = await fetch(`${url}/api/v1/products`, {
        headers: {
          Host: "free.example.com",
          "X-Api-Key": "svc_sk_demoFreeShop00000000000000000000003",
        },
      });
      expect(free.status).toBe(403);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await child.exited).toBe(0);
    // the log is JSON on stdout; stderr would carry a failed worker thread or native module
    expect(await new Response(child.stderr).text()).toBe("");
  });

  test("the demo fixture is embedded: demo runs without fixtures/ beside it", async () => {
    const child = Bun.spawn(
      [bin, "demo", "--json", "--listen", "127.0.0.1:0", "--data", "demo-data"],
      {
        cwd: dir,
        env: bareEnv(),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
        timeout: 60_000,
      },
    );
    const reader = child.stdout.getReader();
    let text = "";
    let intro: { url: string; stores: unknown[] } | undefined;
    while (!intro) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      try {
        intro = JSON.parse(text);
      } catch {
        // not complete yet
      }
    }
    expect(intro?.stores).toHaveLength(3);
    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
  });
});
