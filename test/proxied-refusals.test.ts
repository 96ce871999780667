import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../scripts/bench/processes";
import { loadFixture } from "../src/load/load";
import { send, tempDir, testStore } from "./helpers";
import { nginx, startNginx } from "./nginx";
import { type ServerProcess, spawnServer } from "./process";
import { testLocation } from "./sqld";

/**
 * An answer given before a body was read (a 413 over the route's limit, a 401) reaches a
 * client through nginx and Caddy. The server used to close the connection at once, and
 * the proxy, still sending the body, met a broken pipe and answered 502 (about half the
 * time for 200 KiB, nearly always for 2 MiB).
 */
const caddy = Bun.which("caddy");

/** Caddy on a loopback port, plain HTTP, in front of `upstream`, keeping the Host. */
async function startCaddy(upstream: string) {
  const home = tempDir("storeapi-caddy-");
  const port = freePort();
  mkdirSync(join(home, "xdg"));
  writeFileSync(
    join(home, "Caddyfile"),
    `{\n\tadmin off\n\tauto_https off\n}\n:${port} {\n\treverse_proxy ${upstream} {\n\t\theader_up Host {host}\n\t}\n}\n`,
  );
  const xdg = join(home, "xdg");
  const proc = Bun.spawn(
    [caddy as string, "run", "--config", join(home, "Caddyfile"), "--adapter", "caddyfile"],
    {
      env: { ...process.env, HOME: xdg, XDG_DATA_HOME: xdg, XDG_CONFIG_HOME: xdg },
      stdout: "ignore",
      stderr: "ignore",
    },
  );
  const url = `http://127.0.0.1:${port}`;
  for (
    let i = 0;
    !(await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  ) {
    if (proc.exitCode !== null || i === 100) throw new Error("caddy did not start");
    await Bun.sleep(100);
  }
  const stop = async () => {
    proc.kill("SIGKILL");
    await proc.exited;
    rmSync(home, { recursive: true, force: true });
  };
  return { url, stop };
}

describe("a refusal given before the body is read reaches the client through a proxy", () => {
  const dir = tempDir("storeapi-proxied-");
  let server: ServerProcess;
  beforeAll(async () => {
    const data = join(dir, "data");
    await loadFixture(await testLocation(data), { stores: [testStore()] });
    server = await spawnServer(data, ["--auth-failure-limit", "1000"]);
  });
  afterAll(async () => {
    await server?.signal("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  });

  /** What six of each request answered through the proxy at `url`: status and code. */
  async function refusals(url: string) {
    const bodies = { "200 KiB": "a".repeat(200 * 1024), "2 MiB": "a".repeat(2 * 1024 * 1024) };
    const answers: string[] = [];
    for (const [size, raw] of Object.entries(bodies)) {
      for (const key of [undefined, null]) {
        for (let i = 0; i < 6; i++) {
          const answer = await send(url, "/api/v1/products", {
            method: "POST",
            raw,
            key,
            headers: { "Content-Type": "application/json" },
          });
          answers.push(
            `${size} ${key === null ? "no key" : "key"}: ${answer.status} ${answer.json?.error?.code}`,
          );
        }
      }
    }
    return [...new Set(answers)];
  }

  const expected = [
    "200 KiB key: 413 payload_too_large",
    "200 KiB no key: 401 unauthorized",
    "2 MiB key: 413 payload_too_large",
    "2 MiB no key: 401 unauthorized",
  ];

  test.skipIf(!nginx)(
    "through nginx",
    async () => {
      const proxy = await startNginx([new URL(server.url).host]);
      try {
        expect(await refusals(proxy.url)).toEqual(expected);
      } finally {
        await proxy.stop();
      }
    },
    60_000,
  );

  test.skipIf(!caddy)(
    "through Caddy",
    async () => {
      const proxy = await startCaddy(new URL(server.url).host);
      try {
        expect(await refusals(proxy.url)).toEqual(expected);
      } finally {
        await proxy.stop();
      }
    },
    60_000,
  );
});
