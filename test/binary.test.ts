/**
 * The compiled binary, copied to a temp dir outside the repo (no node_modules reachable),
 * run there with a bare environment: libSQL's native module and the demo fixture must be
 * inside it. Builds its own copy (a second or so), so it does not depend on ./storeapi.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, copyFileSync, readdirSync, rmSync } from "node:fs";
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

async function run(args: string[], extra: Record<string, string> = {}, user?: number) {
  const child = Bun.spawn([...(user === undefined ? [] : asUser(user)), bin, ...args], {
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

/** `setpriv` runs the command as this user id (and group id), without root's groups. */
const asUser = (id: number) => ["setpriv", `--reuid=${id}`, `--regid=${id}`, "--clear-groups"];

/**
 * Starts `serve` on a free loopback port (as `user`, when given); resolves with its URL
 * from the "listening" log line, and its log.
 */
async function serve(options: { data?: string; user?: number } = {}) {
  const child = Bun.spawn(
    [
      ...(options.user === undefined ? [] : asUser(options.user)),
      bin,
      "serve",
      "--data",
      options.data ?? "data",
      "--listen",
      "127.0.0.1:0",
      "--allow-http",
    ],
    { cwd: dir, env: bareEnv(), stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 60_000 },
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
  // keep reading the log so the server never blocks on a full pipe
  (async () => {
    for (let read = await reader.read(); !read.done; read = await reader.read())
      text += new TextDecoder().decode(read.value);
  })().catch(() => {});
  /** The log so far, a JSON object per line. */
  const logLines = () =>
    text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
  return { url, child, logLines };
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

/** The user id of Debian's `nobody`, standing in for a service user. */
const SERVICE_USER = 65534;
const runsAsRoot = process.getuid?.() === 0 && Bun.which("setpriv") !== null;

describe.skipIf(!runsAsRoot)("a data directory and the users who run storeapi on it", () => {
  const data = () => join(dir, "service-data");
  const shop2File = () => join(data(), "stores", "shop2.db");

  beforeAll(async () => {
    chmodSync(dir, 0o755); // the service user runs the binary from here
    expect((await run(["load", "fixture.json", "--data", "service-data"])).code).toBe(0);
    for (const entry of readdirSync(data(), { recursive: true, encoding: "utf8" }))
      chownSync(join(data(), entry), SERVICE_USER, SERVICE_USER);
    chownSync(data(), SERVICE_USER, SERVICE_USER);
    chownSync(shop2File(), 0, 0); // as a command run by root beside the service would make it
  });

  test("a command run by another user than the directory's owner is refused in one line", async () => {
    const refusal = `storeapi: service-data belongs to user id ${SERVICE_USER} and this is user id 0: run storeapi as its owner (sudo -u '#${SERVICE_USER}' storeapi …), so that the server can use every file it makes\n`;
    for (const command of [
      ["stores", "list"],
      ["keys", "create", "shop1", "--name", "root's", "--orders", "read"],
      ["load", "fixture.json", "--replace"],
    ]) {
      const ran = await run([...command, "--data", "service-data"]);
      expect([command.join(" "), ran.code, ran.stdout, ran.stderr]).toEqual([
        command.join(" "),
        1,
        "",
        refusal,
      ]);
    }
  });

  test("the server starts beside another user's store file, names it, and only that store answers 503", async () => {
    const { url, child, logLines } = await serve({ data: "service-data", user: SERVICE_USER });
    try {
      const shop1 = await fetch(`${url}/api/v1/customers?limit=1`, {
        headers: { Host: "shop1.localhost", Authorization: `Bearer ${DEMO_KEY}` },
      });
      expect(shop1.status).toBe(200);
      const shop2 = await fetch(`${url}/api/v1/products`, {
        headers: { Host: "shop2.localhost" },
      });
      expect([shop2.status, await shop2.json()]).toEqual([
        503,
        {
          ok: false,
          error: {
            code: "store_unavailable",
            message: "This store is unavailable right now; try again later.",
          },
        },
      ]);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await child.exited).toBe(0);
    const lines = logLines();
    const warned = lines.find((line) => line.msg.startsWith("files in the data directory"));
    expect([warned?.level, warned?.count, warned?.files]).toEqual([
      "warn",
      1,
      ["service-data/stores/shop2.db"],
    ]);
    const failed = lines.find((line) => line.level === "error");
    expect(failed?.error).toBe(
      `service-data/stores/shop2.db cannot be opened: it belongs to user id 0 and this is user id ${SERVICE_USER}; chown it to this user`,
    );
  });

  test("another user's stores directory, not even readable: the server starts, names it, and its stores answer 503", async () => {
    const stores = join(data(), "stores");
    chownSync(stores, 0, 0);
    chmodSync(stores, 0o700);
    try {
      const { url, child, logLines } = await serve({ data: "service-data", user: SERVICE_USER });
      try {
        const shop1 = await fetch(`${url}/api/v1/customers?limit=1`, {
          headers: { Host: "shop1.localhost", Authorization: `Bearer ${DEMO_KEY}` },
        });
        expect(shop1.status).toBe(503);
        expect((await fetch(`${url}/healthz`)).status).toBe(200);
      } finally {
        child.kill("SIGTERM");
      }
      expect(await child.exited).toBe(0);
      const warned = logLines().find((line) => line.msg.startsWith("files in the data directory"));
      expect(warned?.files).toEqual(["service-data/stores"]);
    } finally {
      chownSync(stores, SERVICE_USER, SERVICE_USER);
    }
  });

  // Each was "unexpected failure: ConnectionFailed(…serve.lock: 14)" or "…attempt to write a readonly database".
  test("a directory its owner may not write: serve and commands say which, and what fixes it", async () => {
    const stores = join(data(), "stores");
    const cases = [
      {
        dir: data(),
        command: ["serve", "--listen", "127.0.0.1:0"],
        line: `service-data/serve.lock cannot be opened: this user (id ${SERVICE_USER}) may not write its directory service-data (mode 500); chmod u+rwx it`,
      },
      {
        dir: stores,
        command: [
          "stores",
          "add",
          "shop9",
          "--domain",
          "shop9.example.com",
          "--plan",
          "free",
          "--owner-email",
          "o@example.com",
        ],
        line: `service-data/stores/shop9.db cannot be opened: this user (id ${SERVICE_USER}) may not write its directory service-data/stores (mode 500); chmod u+rwx it`,
      },
    ];
    for (const { dir: readOnly, command, line } of cases) {
      chmodSync(readOnly, 0o500);
      try {
        const ran = await run([...command, "--data", "service-data"], {}, SERVICE_USER);
        expect([ran.code, ran.stderr]).toEqual([1, `storeapi: ${line}\n`]);
      } finally {
        chmodSync(readOnly, 0o700);
      }
    }
    const listed = await run(
      ["stores", "list", "--json", "--data", "service-data"],
      {},
      SERVICE_USER,
    );
    expect(JSON.parse(listed.stdout).map((store: { slug: string }) => store.slug)).not.toContain(
      "shop9",
    );
  });
});
