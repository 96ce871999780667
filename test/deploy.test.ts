import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePorts } from "../scripts/bench/processes";
import { loadFixture } from "../src/load/load";
import { KEYS, otherStore, tempDir, testStore, until } from "./helpers";
import { spawnUntil } from "./process";
import { TEST_LIBSQL } from "./sqld";

const ROOT = join(import.meta.dir, "..");
const dir = tempDir("storeapi-deploy-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const caddy = Bun.which("caddy");
const systemdAnalyze = Bun.which("systemd-analyze");
if (!caddy && process.env.STOREAPI_REQUIRE_CADDY)
  throw new Error("STOREAPI_REQUIRE_CADDY is set but caddy is not installed");
if (!caddy)
  console.log(
    "deploy test skipped: caddy is not installed (apt-get install -y caddy; .ci/run does)",
  );

test.skipIf(!systemdAnalyze)("systemd-analyze verify accepts deploy/storeapi.service", async () => {
  // verify insists that ExecStart's binary exists: point it at one that does.
  const unit = readFileSync(join(ROOT, "deploy/storeapi.service"), "utf8").replace(
    "/usr/local/bin/storeapi",
    process.execPath,
  );
  const path = join(dir, "storeapi.service");
  writeFileSync(path, unit);
  const run = Bun.spawnSync(["systemd-analyze", "verify", path], {
    stderr: "pipe",
    stdout: "pipe",
  });
  expect(run.stderr.toString()).toBe("");
  expect(run.exitCode).toBe(0);
});

/**
 * deploy/Caddyfile with test globals beside its own (loopback ports, Caddy's internal CA,
 * no admin API, no ACME email) and this test's storeapi addresses.
 */
function testCaddyfile(ports: [http: number, https: number], api: string, ops: string): string {
  const deployed = readFileSync(join(ROOT, "deploy/Caddyfile"), "utf8");
  const globalsStart = deployed.indexOf("\n{\n") + 3;
  const globalsEnd = deployed.indexOf("\n}\n", globalsStart);
  const globals = deployed.slice(globalsStart, globalsEnd).replace(/^\temail .*\n/m, "");
  const sites = deployed.slice(globalsEnd + 3);
  expect(sites).toContain("reverse_proxy 127.0.0.1:8080");
  expect(globals).toContain("ask http://127.0.0.1:9464/tls-allowed");
  const test = `\tadmin off\n\thttp_port ${ports[0]}\n\thttps_port ${ports[1]}\n\tlocal_certs\n\tskip_install_trust\n`;
  return `{\n${test}${globals.replace("127.0.0.1:9464", ops)}\n}\n${sites.replaceAll("127.0.0.1:8080", api)}`;
}

/**
 * curl from 127.0.0.2 (a client Caddy sees, distinct from Caddy itself) to `host` through
 * Caddy. `error` is curl's own complaint when it got no answer (status 0).
 */
function curl(args: string[]): { status: number; body: string; error: string } {
  const run = Bun.spawnSync(
    [
      "curl",
      "-sS",
      "--max-time",
      "15",
      "--interface",
      "127.0.0.2",
      "-w",
      "\n%{http_code}",
      ...args,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const out = run.stdout.toString();
  const cut = out.lastIndexOf("\n");
  const error = run.stderr.toString().trim();
  return { body: out.slice(0, cut), status: Number(out.slice(cut + 1)), error };
}

// Loads into files and spawns serve itself.
test.skipIf(!caddy || TEST_LIBSQL)(
  "Caddy terminates TLS in front of storeapi: right store, client IP and scheme honoured",
  async () => {
    const data = join(dir, "data");
    await loadFixture(data, {
      stores: [
        testStore({ products: [{ id: 1, name: "Shop one's", price: 1 }] }),
        otherStore({ products: [{ id: 1, name: "Shop two's", price: 2 }] }),
      ],
    });
    const api = await spawnUntil(
      [
        "serve",
        "--data",
        data,
        "--listen",
        "127.0.0.1:0",
        "--trust-proxy",
        "127.0.0.1/32",
        "--platform-domain",
        "platform.test",
        "--metrics-listen",
        "127.0.0.1:0",
      ],
      '"listening"',
    );
    const caddyHome = join(dir, "caddy");
    mkdirSync(caddyHome);
    const caddyLog = join(dir, "caddy.log");
    let proxy: ReturnType<typeof Bun.spawn> | undefined;
    try {
      const { url, metricsUrl } = JSON.parse(
        api.text.split("\n").find((l) => l.includes('"listening"')) ?? "{}",
      ) as { url: string; metricsUrl: string };
      const [httpPort, httpsPort] = freePorts(2);
      writeFileSync(
        join(caddyHome, "Caddyfile"),
        testCaddyfile([httpPort, httpsPort], new URL(url).host, new URL(metricsUrl).host),
      );
      proxy = Bun.spawn(
        [
          caddy as string,
          "run",
          "--config",
          join(caddyHome, "Caddyfile"),
          "--adapter",
          "caddyfile",
        ],
        {
          env: {
            ...process.env,
            HOME: caddyHome,
            XDG_DATA_HOME: caddyHome,
            XDG_CONFIG_HOME: caddyHome,
            STORE_DOMAINS: "shop1.test shop2.test",
            PLATFORM_DOMAIN: "platform.test",
            ACME_EMAIL: "",
          },
          stdout: "ignore",
          stderr: Bun.file(caddyLog),
        },
      );
      const rootCa = join(caddyHome, "caddy/pki/authorities/local/root.crt");
      const through = (host: string, path: string, key: string) =>
        curl([
          "--resolve",
          `${host}:${httpsPort}:127.0.0.1`,
          "--cacert",
          rootCa,
          "-H",
          `Authorization: Bearer ${key}`,
          `https://${host}:${httpsPort}${path}`,
        ]);
      // "200 {product name}", or what went wrong with Caddy's warnings and errors to see why.
      const productOne = (host: string, key: string) => {
        const answer = through(host, "/api/v1/products/1", key);
        if (answer.status === 200) return `200 ${JSON.parse(answer.body).data.name}`;
        const complaints = readFileSync(caddyLog, "utf8")
          .split("\n")
          .filter((line) => /"level":"(warn|error)"/.test(line) && !line.includes("OCSP"));
        return [`${answer.status} ${answer.body}${answer.error}`, ...complaints].join("\n");
      };
      // A name's first request has its certificate made then. Caddy's own CA dates it from
      // the current whole second, and curl's clock may still be a few ms before it: "certificate
      // is not yet valid" (about 1 in 160 new names). A CA on the internet backdates its certificates.
      const firstProduct = async (host: string, key: string) => {
        let answer = productOne(host, key);
        for (let i = 0; i < 10 && answer.includes("certificate is not yet valid"); i++) {
          await Bun.sleep(200);
          answer = productOne(host, key);
        }
        return answer;
      };
      let first = "";
      for (let i = 0; i < 100 && !first.startsWith("200 "); i++) {
        await Bun.sleep(200);
        if (existsSync(rootCa)) first = productOne("shop1.test", KEYS.all);
      }
      expect(first).toBe("200 Shop one's");
      expect(await firstProduct("shop2.test", KEYS.other)).toBe("200 Shop two's");
      expect(await firstProduct("shop2.platform.test", KEYS.other)).toBe("200 Shop two's");
      // A name no store has gets no certificate (storeapi's /tls-allowed says no): no answer.
      expect(through("junk.platform.test", "/api/v1/products/1", KEYS.other).status).toBe(0);

      // Plain HTTP through Caddy reaches storeapi, which refuses it: no redirect to follow
      // with the key.
      const plain = curl([
        "--resolve",
        `shop1.test:${httpPort}:127.0.0.1`,
        "-H",
        `Authorization: Bearer ${KEYS.all}`,
        `http://shop1.test:${httpPort}/api/v1/products/1`,
      ]);
      expect(`${plain.status} ${JSON.parse(plain.body).error.code}`).toBe("403 https_required");

      // Straight to storeapi over plain HTTP, even claiming https from an untrusted peer: refused.
      const direct = curl([
        "-H",
        "Host: shop1.test",
        "-H",
        "X-Forwarded-Proto: https",
        "-H",
        `Authorization: Bearer ${KEYS.all}`,
        `${url}/api/v1/products/1`,
      ]);
      expect(`${direct.status} ${JSON.parse(direct.body).error.code}`).toBe("403 https_required");

      api.child.kill("SIGTERM"); // flushes the request log
      const lines = await api.rest();
      await api.child.exited;
      // Caddy's error line for an upstream that is gone copies the request's headers; an
      // X-Api-Key among them is left out, as Caddy leaves out Authorization.
      const secret = KEYS.all;
      const gone = curl([
        "--resolve",
        `shop1.test:${httpsPort}:127.0.0.1`,
        "--cacert",
        rootCa,
        "-H",
        `X-Api-Key: ${secret}`,
        `https://shop1.test:${httpsPort}/api/v1/products/1`,
      ]);
      expect(gone.status).toBe(502);
      const caddyLines = () => readFileSync(caddyLog, "utf8");
      expect(await until(() => caddyLines().includes("/api/v1/products/1"))).toBe(true);
      expect(caddyLines()).not.toContain(secret);
      const logged = lines
        .split("\n")
        .filter((l) => l.includes('"path":"/api/v1/products/1"'))
        .map((l) => JSON.parse(l));
      expect(logged.map((l) => `${l.ip} ${l.store} ${l.status}`)).toEqual([
        "127.0.0.2 shop1 200",
        "127.0.0.2 shop2 200",
        "127.0.0.2 shop2 200",
        "127.0.0.2 null 403", // plain HTTP through Caddy: refused before the store is looked up
        "127.0.0.2 null 403", // straight to storeapi
      ]);
    } finally {
      proxy?.kill("SIGTERM");
      await proxy?.exited;
      api.child.kill("SIGTERM");
      await api.child.exited;
    }
  },
  60_000,
);
