import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { KEYS, startTestServer, type TestServer, tempDir, testStore } from "./helpers";

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
