import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KEYS, startTestServer, type TestServer, tempDir, testStore } from "./helpers";
import { runCli } from "./process";

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
