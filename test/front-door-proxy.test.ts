import { afterAll, describe, expect, test } from "bun:test";
import {
  statusAndCode as code,
  KEYS,
  startTestServer,
  type TestServer,
  testStore,
} from "./helpers";

/** Black-box: HTTPS enforcement, trusted proxies and spoofing attempts from untrusted peers. */

const BAD_KEY = "svc_sk_doesNotExist000000000000000000000000";
const probe = "/api/v1/__front-door-probe";
const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.stop())));

async function serve(flags: Record<string, string | boolean>) {
  const server = await startTestServer({
    stores: [testStore()],
    flags: { "allow-http": false, ...flags },
  });
  servers.push(server);
  return server;
}

/** Authenticated (no such route, so 404 with rate headers). */
const AUTHENTICATED = "404 not_found";

describe("plain HTTP without a trusted proxy", () => {
  test("is 403 https_required; X-Forwarded-Proto from the (untrusted) peer is not believed; healthz still answers", async () => {
    const server = await serve({});
    const plain = await server.request(probe);
    expect(code(plain)).toBe("403 https_required");
    expect(plain.json.error.message).toBe(
      "This API is served over HTTPS only; repeat the request with https://.",
    );
    expect(code(await server.request(probe, { headers: { "X-Forwarded-Proto": "https" } }))).toBe(
      "403 https_required",
    );
    expect(code(await server.request("/healthz"))).toBe("200 ok");
  });

  test("a trust list that does not hold the peer changes nothing", async () => {
    const server = await serve({ "trust-proxy": "10.0.0.0/8,192.168.0.0/16" });
    const spoofed = await server.request(probe, {
      headers: { "X-Forwarded-Proto": "https", "X-Forwarded-For": "10.0.0.1" },
    });
    expect(code(spoofed)).toBe("403 https_required");
  });

  test("--allow-http accepts plain HTTP", async () => {
    const server = await serve({ "allow-http": true });
    expect(code(await server.request(probe))).toBe(AUTHENTICATED);
  });

  test("X-Forwarded-For from an untrusted peer is ignored for the lockout", async () => {
    const server = await serve({ "allow-http": true, "auth-failure-limit": "2" });
    const first = await server.request(probe, {
      key: BAD_KEY,
      headers: { "X-Forwarded-For": "1.1.1.1" },
    });
    const second = await server.request(probe, {
      key: BAD_KEY,
      headers: { "X-Forwarded-For": "2.2.2.2" },
    });
    expect([code(first), code(second)]).toEqual(["401 unauthorized", "401 unauthorized"]);
    const escaped = await server.request(probe, { headers: { "X-Forwarded-For": "3.3.3.3" } });
    expect(code(escaped)).toBe("429 too_many_failures");
    expect(escaped.headers.get("retry-after")).toMatch(/^(599|600)$/);
  });
});

describe("behind a trusted proxy", () => {
  test("X-Forwarded-Proto: https from the proxy is HTTPS; anything else is plain HTTP", async () => {
    const server = await serve({ "trust-proxy": "127.0.0.1/32,::1" });
    expect(code(await server.request(probe, { headers: { "X-Forwarded-Proto": "https" } }))).toBe(
      AUTHENTICATED,
    );
    expect(code(await server.request(probe, { headers: { "X-Forwarded-Proto": "HTTPS" } }))).toBe(
      AUTHENTICATED,
    );
    for (const proto of [undefined, "http", "https, http", "ws"]) {
      const headers: Record<string, string> = proto ? { "X-Forwarded-Proto": proto } : {};
      expect([proto, code(await server.request(probe, { headers }))]).toEqual([
        proto,
        "403 https_required",
      ]);
    }
  });

  test("the client IP is the right-most forwarded address not in the list; prepending addresses does not escaped a block", async () => {
    const server = await serve({
      "trust-proxy": "127.0.0.1,10.0.0.0/8",
      "auth-failure-limit": "2",
    });
    const via = (forwardedFor: string, key: string = KEYS.all) =>
      server.request(probe, {
        key,
        headers: { "X-Forwarded-Proto": "https", "X-Forwarded-For": forwardedFor },
      });
    expect(code(await via("9.9.9.9", BAD_KEY))).toBe("401 unauthorized");
    expect(code(await via("5.5.5.5, 9.9.9.9, 10.1.1.1", BAD_KEY))).toBe("401 unauthorized"); // 9.9.9.9 via an inner proxy
    const blocked = await via("9.9.9.9");
    expect(code(blocked)).toBe("429 too_many_failures");
    expect(code(await via("8.8.8.8, 9.9.9.9"))).toBe("429 too_many_failures"); // spoofed left part
    expect(code(await via("10.9.9.9, 9.9.9.9"))).toBe("429 too_many_failures"); // a spoofed "trusted" hop too
    expect(code(await via("8.8.8.8"))).toBe(AUTHENTICATED); // another client behind the same proxy
    expect(code(await via("9.9.9.9, 8.8.8.8"))).toBe(AUTHENTICATED); // the proxy saw 8.8.8.8
    // without X-Forwarded-For the proxy itself is the client, and it is not blocked
    expect(code(await server.request(probe, { headers: { "X-Forwarded-Proto": "https" } }))).toBe(
      AUTHENTICATED,
    );
  });
});
