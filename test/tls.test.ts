import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { certificateWarning, type TlsPair } from "../src/tls";
import { KEYS, startTestServer, type TestServer, tempDir, testStore } from "./helpers";
import { runCli, serverRunsOnDeno, spawnServer } from "./process";

/** Black-box: `--tls-cert/--tls-key` serve HTTPS, with a self-signed certificate made here. */

let certDir: string;
let server: TestServer;
beforeAll(async () => {
  certDir = tempDir("storeapi-tls-");
  const openssl = Bun.spawnSync(
    [
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      "/CN=localhost",
      "-days",
      "1",
      "-keyout",
      join(certDir, "key.pem"),
      "-out",
      join(certDir, "cert.pem"),
    ],
    { stdout: "ignore", stderr: "pipe", timeout: 30_000 },
  );
  if (openssl.exitCode !== 0) throw new Error(`openssl failed: ${openssl.stderr.toString()}`);
  const other = Bun.spawnSync(
    ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
    { stdout: "pipe", stderr: "pipe", timeout: 30_000 },
  );
  if (other.exitCode !== 0) throw new Error(`openssl failed: ${other.stderr.toString()}`);
  writeFileSync(join(certDir, "other-key.pem"), other.stdout);
  server = await startTestServer({
    stores: [testStore()],
    flags: {
      "allow-http": false,
      "tls-cert": join(certDir, "cert.pem"),
      "tls-key": join(certDir, "key.pem"),
    },
  });
});
afterAll(async () => {
  await server?.stop();
  rmSync(certDir, { recursive: true, force: true });
});

function tlsFetch(path: string, headers: Record<string, string> = {}) {
  return fetch(server.url + path, {
    headers: { Host: "shop1.test", Authorization: `Bearer ${KEYS.all}`, ...headers },
    tls: { rejectUnauthorized: false },
  });
}

describe("HTTPS", () => {
  test("the server speaks TLS and an authenticated request passes without any allow-http", async () => {
    expect(server.url).toStartWith("https://127.0.0.1:");
    const answer = await tlsFetch("/api/v1/__tls-probe");
    expect(answer.status).toBe(404);
    expect(answer.headers.get("ratelimit-limit")).toBe("120");
    expect(await answer.json()).toEqual({
      ok: false,
      error: { code: "not_found", message: "There is no endpoint at /api/v1/__tls-probe." },
    });
  });

  test("healthz answers over TLS; a bad key is still 401", async () => {
    expect((await tlsFetch("/healthz")).status).toBe(200);
    expect((await tlsFetch("/api/v1/__tls-probe", { Authorization: "Bearer nope" })).status).toBe(
      401,
    );
  });

  test("a client that offers HTTP/2 reaches its store (Deno speaks it, and sends no Host)", async () => {
    const port = new URL(server.url).port;
    // Not spawnSync: the server may run in this process.
    const curl = Bun.spawn(
      [
        "curl",
        "-sk",
        "--http2",
        "--resolve",
        `shop1.test:${port}:127.0.0.1`,
        "-H",
        `Authorization: Bearer ${KEYS.all}`,
        "-w",
        "\\n%{http_version} %{http_code}",
        `https://shop1.test:${port}/api/v1/__tls-probe`,
      ],
      { stdout: "pipe", stderr: "pipe", timeout: 30_000 },
    );
    const [body, protocol] = (await new Response(curl.stdout).text()).split("\n");
    // Deno negotiates HTTP/2 (ALPN); Bun's TLS offers HTTP/1.1 only.
    expect(protocol).toBe(serverRunsOnDeno() ? "2 404" : "1.1 404");
    expect(JSON.parse(body).error.message).toBe("There is no endpoint at /api/v1/__tls-probe.");
  });

  test("the certificate is checked by default (self-signed is refused without the opt-out)", async () => {
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  test("plain HTTP to the TLS port gets no API answer", async () => {
    const plainUrl = server.url.replace("https://", "http://");
    const outcome = await fetch(`${plainUrl}/api/v1/__tls-probe`, {
      headers: { Host: "shop1.test" },
    }).then(
      (r) => r.status,
      () => "refused",
    );
    expect(outcome).toBe("refused");
  });
});

describe("certificate and key files", () => {
  test("a file that is not what its flag asks for is one line naming it, before listening", async () => {
    const file = (name: string) => join(certDir, name);
    const serve = (cert: string, key: string) =>
      runCli([
        "serve",
        "--data",
        certDir,
        "--listen",
        "127.0.0.1:0",
        "--tls-cert",
        cert,
        "--tls-key",
        key,
      ]);
    const cases: Array<[string, string, string]> = [
      [
        file("key.pem"),
        file("key.pem"),
        `--tls-cert: ${file("key.pem")} is not a PEM certificate (-----BEGIN CERTIFICATE-----)`,
      ],
      [
        file("cert.pem"),
        file("cert.pem"),
        `--tls-key: ${file("cert.pem")} is not a PEM private key without a passphrase (-----BEGIN PRIVATE KEY-----)`,
      ],
      [
        file("cert.pem"),
        file("other-key.pem"),
        `--tls-key: ${file("other-key.pem")} is not the private key of the certificate in ${file("cert.pem")}`,
      ],
      [file("cert.pem"), certDir, `--tls-key: cannot read ${certDir}: it is a directory`],
    ];
    for (const [cert, key, line] of cases) {
      const result = await serve(cert, key);
      expect([result.code, result.stderr]).toEqual([2, `storeapi: ${line}\n`]);
    }
  });
});

/**
 * A self-signed certificate valid from now for `days` (-1: it expired yesterday), and its
 * key; X.509 version 3 unless `version1` (no extensions).
 */
function certificate(
  days: number,
  version1 = false,
): { cert: string; key: string; validTo: number } {
  const dir = tempDir("storeapi-tls-dates-");
  const [key, csr, cert] = ["key.pem", "req.csr", "cert.pem"].map((name) => join(dir, name));
  const run = (args: string[]) => {
    const done = Bun.spawnSync(["openssl", ...args], { stderr: "pipe", timeout: 30_000 });
    if (done.exitCode !== 0) throw new Error(`openssl failed: ${done.stderr.toString()}`);
    return done.stdout.toString();
  };
  run([
    "req",
    "-new",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=localhost",
    "-keyout",
    key,
    "-out",
    csr,
  ]);
  const extensions = join(dir, "v3.ext");
  writeFileSync(extensions, "subjectAltName = DNS:localhost\n");
  const v3 = version1 ? [] : ["-extfile", extensions];
  run(["x509", "-req", "-in", csr, "-signkey", key, "-days", String(days), ...v3, "-out", cert]);
  const end = run(["x509", "-in", cert, "-noout", "-enddate"]).trim().replace("notAfter=", "");
  return { cert, key, validTo: Date.parse(end) };
}

describe("certificate dates", () => {
  const cases = [
    {
      days: -1,
      warning: "the TLS certificate has expired: clients refuse it; renew it and restart",
    },
    { days: 10, warning: "the TLS certificate expires within 30 days: renew it and restart" },
    { days: 400, warning: null },
  ];
  for (const { days, warning } of cases) {
    test(`valid for ${days} days: ${warning ?? "no warning"}; its end is a metric`, async () => {
      const { cert, key, validTo } = certificate(days);
      const dataDir = tempDir("storeapi-tls-data-");
      const tls = ["--tls-cert", cert, "--tls-key", key];
      const flags = [...tls, "--metrics-listen", "127.0.0.1:0"];
      const served = await spawnServer(dataDir, flags, {}, { allowHttp: false });
      try {
        const lines = served
          .stdout()
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line));
        const warnings = lines.filter((line) => line.msg.includes("certificate"));
        const iso = new Date(validTo).toISOString();
        expect(
          warnings.map(({ level, msg, file, validTo }) => ({ level, msg, file, validTo })),
        ).toEqual(warning ? [{ level: "warn", msg: warning, file: cert, validTo: iso }] : []);
        const { metricsUrl } = lines.find((line) => line.msg === "listening");
        const scrape = await (await fetch(metricsUrl)).text();
        const gauge = "storeapi_tls_certificate_expiry_timestamp_seconds";
        expect(scrape).toContain(`\n${gauge} ${validTo / 1000}\n`);
        // It serves all the same: the client decides.
        const health = await fetch(`${served.url}/healthz`, { tls: { rejectUnauthorized: false } });
        expect(health.status).toBe(200);
      } finally {
        expect(await served.signal("SIGTERM")).toBe(0);
        rmSync(dataDir, { recursive: true, force: true });
        rmSync(join(cert, ".."), { recursive: true, force: true });
      }
    }, 60_000);
  }
});

test("a certificate is warned about from 30 days before its end, and before its start", () => {
  const DAY = 86_400_000;
  const pair: TlsPair = {
    certFile: "c.pem",
    cert: "",
    key: "",
    validFrom: 100 * DAY,
    validTo: 200 * DAY,
  };
  const at = (day: number) => certificateWarning(pair, day * DAY)?.slice(0, 36) ?? null;
  expect([99.9, 100, 169.9, 170.1, 199.9, 200].map(at)).toEqual([
    "the TLS certificate is not valid yet",
    null,
    null,
    "the TLS certificate expires within 3",
    "the TLS certificate expires within 3",
    "the TLS certificate has expired: cli",
  ]);
});

test("a version 1 certificate: Bun serves it, Deno's TLS refuses it in one line naming the file", async () => {
  const { cert, key } = certificate(30, true);
  const dataDir = tempDir("storeapi-tls-data-");
  try {
    const tls = ["--tls-cert", cert, "--tls-key", key];
    if (serverRunsOnDeno()) {
      const serve = ["serve", "--data", dataDir, "--listen", "127.0.0.1:0", ...tls];
      const result = await runCli(serve, { underTest: true });
      expect(result.code).toBe(1);
      expect(result.stderr).toStartWith(
        `storeapi: --tls-cert: the TLS library refused the certificate in ${cert} (`,
      );
      expect(result.stderr).toEndWith("); make one with X.509 version 3 extensions\n");
    } else {
      const served = await spawnServer(dataDir, tls, {}, { allowHttp: false });
      const health = await fetch(`${served.url}/healthz`, { tls: { rejectUnauthorized: false } });
      expect(health.status).toBe(200);
      expect(await served.signal("SIGTERM")).toBe(0);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(join(cert, ".."), { recursive: true, force: true });
  }
}, 60_000);
