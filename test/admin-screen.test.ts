import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
  BAD_LINK,
  EMAIL_SENT,
  LIMIT_SENTENCE,
  NOT_SHOWN_AGAIN,
  SESSION_ENDED,
} from "../src/admin/pages";
import { StorePool } from "../src/db/pool";
import { listMail } from "../src/mail/outbox";
import { AdminClient, ORDERS_WRITE, signInToken, textOfId } from "./admin-support";
import {
  otherStore,
  send,
  startTestServer,
  type TestServer,
  tempDir,
  testStore,
  until,
} from "./helpers";
import { eventually, parseMessage } from "./mail-support";
import { runCli, serverRunsOnDeno } from "./process";
import { testLocation } from "./sqld";

/** Tests that start servers or CLI processes on a shared, busy machine: bounded, not tight. */
const SLOW = 60_000;

const SECURITY = {
  "content-security-policy":
    "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

let server: TestServer;
/** Where the server delivers mail (`--mail-dir`): a sign-in link's token exists only there. */
const mailDir = tempDir("storeapi-admin-mail-");

beforeAll(async () => {
  server = await startTestServer({
    flags: { "mail-dir": mailDir },
    stores: [
      testStore({ name: "חנות הבדיקה <b>", keys: [] }),
      otherStore({ keys: [] }),
      testStore({ slug: "shop3", domain: "shop3.test", ownerEmail: "owner@shop3.test", keys: [] }),
    ],
  });
}, SLOW);
afterAll(async () => {
  await server.stop();
  rmSync(mailDir, { recursive: true, force: true });
});

const client = (host = "shop1.test") => new AdminClient(server.url, host);
const token = (slug = "shop1", now?: number) => signInToken(server.dataDir, slug, now);

async function signedIn(host = "shop1.test"): Promise<AdminClient> {
  const admin = client(host);
  expect((await admin.signIn(await token(host.split(".")[0]))).status).toBe(303);
  return admin;
}

async function mailOf(slug: string) {
  const pool = new StorePool(await testLocation(server.dataDir));
  try {
    return await pool.use(slug, listMail);
  } finally {
    await pool.close();
  }
}

describe("signing in with a one-time link", () => {
  test("a fresh token starts a session (303 to the screen) with a strict cookie; the token is then spent", async () => {
    const admin = client();
    const t = await token();
    const first = await admin.get(`/api/admin/sign-in?token=${t}`);
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/api/admin/");
    const cookie = first.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(
      /^storeapi_admin=[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/api\/admin; HttpOnly; SameSite=Strict$/,
    );
    expect((await admin.get("/api/admin/")).status).toBe(200);

    const again = await client().get(`/api/admin/sign-in?token=${t}`);
    expect(again.status).toBe(400);
    expect(again.text).toContain(BAD_LINK.replace(/'/g, "&#39;"));
    expect(again.headers.get("set-cookie")).toBeNull();
  });

  test("a HEAD on a link (a mail scanner's, a link checker's) neither spends it nor signs in", async () => {
    const t = await token();
    const probe = await fetch(`${server.url}/api/admin/sign-in?token=${t}`, {
      method: "HEAD",
      headers: { Host: "shop1.test" },
      redirect: "manual",
    });
    // What GET answers, without the session.
    expect([probe.status, probe.headers.get("location"), probe.headers.get("set-cookie")]).toEqual([
      303,
      "/api/admin/",
      null,
    ]);
    const admin = client();
    expect((await admin.get(`/api/admin/sign-in?token=${t}`)).status).toBe(303);
    expect((await admin.get("/api/admin/")).status).toBe(200);
  });

  test("an expired, foreign-store, unknown or malformed token shows the sign-in page with the message (400)", async () => {
    const expired = await token("shop1", Date.now() - 15 * 60_000 - 1);
    const foreign = await token("shop2");
    for (const t of [expired, foreign, "A".repeat(43), "short", "%3Cscript%3E"]) {
      const answer = await client().get(`/api/admin/sign-in?token=${t}`);
      expect(answer.status).toBe(400);
      expect(answer.text).toContain("This sign-in link does not work");
      expect(answer.text).toContain('<label for="email">Email</label>');
    }
    // The foreign token is still good on its own store.
    expect((await client("shop2.test").get(`/api/admin/sign-in?token=${foreign}`)).status).toBe(
      303,
    );
  });

  test("the link token is stored only as its digest", async () => {
    const t = await token();
    const pool = new StorePool(await testLocation(server.dataDir));
    try {
      const rows = await pool.use("shop1", (db) =>
        db.all<Record<string, unknown>>("SELECT * FROM admin_links"),
      );
      expect(JSON.stringify(rows)).not.toContain(t);
      expect(rows.every((r) => /^[0-9a-f]{64}$/.test(String(r.digest)))).toBe(true);
    } finally {
      await pool.close();
    }
  });

  test(
    "over HTTPS (a trusted proxy's X-Forwarded-Proto) the cookie is Secure; plain HTTP is refused when required",
    async () => {
      const flags = { "allow-http": false, "trust-proxy": "127.0.0.1/32" };
      const tls = await startTestServer({ stores: [testStore({ keys: [] })], flags });
      try {
        // From the CLI, as an operator would: a second pool in this process could race the server's locks.
        const link = await runCli(["admin-link", "shop1", "--json", "--data", tls.dataDir]);
        const t = JSON.parse(link.stdout).token;
        const https = await new AdminClient(tls.url).get(`/api/admin/sign-in?token=${t}`, {
          "X-Forwarded-Proto": "https",
        });
        expect(https.status).toBe(303);
        expect(https.headers.get("set-cookie")).toContain("; Secure");
        const plain = await new AdminClient(tls.url).get("/api/admin/sign-in");
        expect(plain.status).toBe(403);
        expect(plain.headers.get("content-type")).toBe("text/html; charset=UTF-8");
        expect(plain.text).toContain("This API is served over HTTPS only");
      } finally {
        await tls.stop();
      }
    },
    SLOW,
  );
});

describe("a change of owner", () => {
  test("ends the sessions the previous owner had: their next page is the sign-in page", async () => {
    const admin = await signedIn("shop2.test");
    expect((await admin.get("/api/admin/")).status).toBe(200);
    const setOwner = (email: string) =>
      runCli(["stores", "set", "shop2", "--owner-email", email, "--data", server.dataDir], {
        underTest: true,
      });
    expect((await setOwner("new-owner@shop2.test")).code).toBe(0);
    try {
      // A running server takes the change within a second (its registry poll).
      expect(await until(async () => (await admin.get("/api/admin/")).status === 303)).toBe(true);
      const ended = await admin.get("/api/admin/");
      expect([ended.status, ended.headers.get("location")]).toEqual([
        303,
        "/api/admin/sign-in?ended",
      ]);
    } finally {
      expect((await setOwner("owner@shop2.test")).code).toBe(0);
    }
  });
});

describe("storeapi admin-link", () => {
  test(
    "prints a working link on the store's own domain, or on --origin; --json gives url, token, expiresAt",
    async () => {
      const data = ["--data", server.dataDir];
      const plain = await runCli(["admin-link", "shop1", ...data], { underTest: true });
      expect(plain.code).toBe(0);
      expect(plain.stdout).toMatch(
        /^https:\/\/shop1\.test\/api\/admin\/sign-in\?token=[A-Za-z0-9_-]{43}\n$/,
      );
      const json = await runCli(
        ["admin-link", "shop1", "--origin", "http://shop1.localhost:8080", "--json", ...data],
        { underTest: true },
      );
      const link = JSON.parse(json.stdout);
      expect(Object.keys(link)).toEqual(["url", "token", "expiresAt"]);
      expect(link.url).toBe(`http://shop1.localhost:8080/api/admin/sign-in?token=${link.token}`);
      expect(link.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[23]:00$/);
      expect((await client().get(`/api/admin/sign-in?token=${link.token}`)).status).toBe(303);
    },
    SLOW,
  );

  test(
    "a bad --origin is exit 2, an unknown store exit 1, each one line",
    async () => {
      const data = ["--data", server.dataDir];
      const origins = ["ftp://x.test", "not a url", "https://x.test/path"];
      const bad = await Promise.all(
        origins.map((o) =>
          runCli(["admin-link", "shop1", "--origin", o, ...data], { underTest: true }),
        ),
      );
      expect(bad.map((r) => r.code)).toEqual([2, 2, 2]);
      expect(bad[0].stderr).toBe(
        'storeapi: --origin must be like https://shop.example.com (scheme, host and port only), not "ftp://x.test"\n',
      );
      const unknown = await runCli(["admin-link", "nope", ...data], { underTest: true });
      expect([unknown.code, unknown.stderr]).toEqual([1, 'storeapi: no store "nope"\n']);
    },
    SLOW,
  );
});

describe("pages without a session", () => {
  test("HEAD says the Content-Length its GET sends, for pages and the stylesheet", async () => {
    for (const path of [
      "/api/admin/sign-in",
      "/api/admin/sign-in?sent",
      "/api/admin/sign-in?token=x",
      "/api/admin/assets/admin.css",
    ]) {
      const get = await fetch(`${server.url}${path}`, { headers: { Host: "shop1.test" } });
      const bytes = (await get.arrayBuffer()).byteLength;
      const head = await fetch(`${server.url}${path}`, {
        method: "HEAD",
        headers: { Host: "shop1.test" },
      });
      expect([path, head.status, head.headers.get("content-length")]).toEqual([
        path,
        get.status,
        String(bytes),
      ]);
      expect(bytes).toBeGreaterThan(500);
    }
  });

  test("every page but sign-in answers 303 to /api/admin/sign-in (a browser on the same site)", async () => {
    for (const path of [
      "/api/admin/",
      "/api/admin/keys/new",
      "/api/admin/keys/1/delete",
      "/api/admin/nothing-here",
    ]) {
      const answer = await client().get(path);
      expect([path, answer.status, answer.headers.get("location")]).toEqual([
        path,
        303,
        "/api/admin/sign-in",
      ]);
    }
    // A form comes from a page shown in a session: the sign-in page says it ended.
    const post = await client().post("/api/admin/keys", ORDERS_WRITE);
    expect([post.status, post.headers.get("location")]).toEqual([303, "/api/admin/sign-in?ended"]);
    // The screen answers with the request's id, as the API does (and as its log line has it).
    const traced = await client().get("/api/admin/", { "X-Request-Id": "admin-trace-1" });
    expect(traced.headers.get("x-request-id")).toBe("admin-trace-1");
    const made = (await client().get("/api/admin/")).headers.get("x-request-id") ?? "";
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("the screen reached from another site without a cookie goes on to itself (the Strict cookie is withheld there)", async () => {
    const crossSite = { "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate" };
    const onward = await client().get("/api/admin/", crossSite);
    expect(onward.status).toBe(200);
    expect(onward.text).toContain('<meta http-equiv="refresh" content="0; url=/api/admin/"/>');
    expect(onward.text).toContain('<a href="/api/admin/">Continue to API and keys</a>');
    // A cookie that was sent is judged as it is; other pages, and the same site, as before.
    const withCookie = await client().get("/api/admin/", {
      ...crossSite,
      Cookie: `storeapi_admin=${"s".repeat(43)}`,
    });
    const signIn = "/api/admin/sign-in";
    for (const [answer, path, to] of [
      [withCookie, "/api/admin/", `${signIn}?ended`], // a session once, ended since
      [await client().get("/api/admin/keys/new", crossSite), "/api/admin/keys/new", signIn],
      [
        await client().get("/api/admin/", { "Sec-Fetch-Site": "same-origin" }),
        "/api/admin/",
        signIn,
      ],
    ] as const)
      expect([path, answer.status, answer.headers.get("location")]).toEqual([path, 303, to]);
  });

  test("OPTIONS is 405 with Allow on a page, 404 elsewhere, before the host is looked at", async () => {
    for (const host of ["shop1.test", "nowhere.test"]) {
      const answer = await fetch(`${server.url}/api/admin/`, {
        method: "OPTIONS",
        headers: { Host: host },
      });
      expect([answer.status, answer.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    }
    // api-contract.md §2 step 4: "(404 if no such path)".
    const nowhere = await fetch(`${server.url}/api/admin/nope`, {
      method: "OPTIONS",
      headers: { Host: "shop1.test" },
    });
    expect([nowhere.status, nowhere.headers.get("allow")]).toEqual([404, null]);
    const asset = await fetch(`${server.url}/api/admin/assets/admin.css`, {
      method: "OPTIONS",
      headers: { Host: "shop1.test" },
    });
    expect([asset.status, asset.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
  });

  test("a 405 names the methods that path answers", async () => {
    const admin = await signedIn();
    const allowOf = async (method: string, path: string) => {
      const answer = await fetch(`${server.url}${path}`, {
        method,
        headers: { Host: "shop1.test", Cookie: admin.cookie ?? "" },
        redirect: "manual",
      });
      return [method, path, answer.status, answer.headers.get("allow")];
    };
    expect(
      await Promise.all([
        allowOf("PUT", "/api/admin/"),
        allowOf("GET", "/api/admin/sign-out"),
        allowOf("DELETE", "/api/admin/keys/new"),
        allowOf("PUT", "/api/admin/keys"),
        allowOf("PATCH", "/api/admin/keys/1/delete"),
        allowOf("PUT", "/api/admin/sign-in"),
        allowOf("POST", "/api/admin/assets/admin.js"),
      ]),
    ).toEqual([
      ["PUT", "/api/admin/", 405, "GET, HEAD"],
      ["GET", "/api/admin/sign-out", 405, "POST"],
      ["DELETE", "/api/admin/keys/new", 405, "GET, HEAD"],
      ["PUT", "/api/admin/keys", 405, "GET, HEAD, POST"],
      ["PATCH", "/api/admin/keys/1/delete", 405, "GET, HEAD, POST"],
      ["PUT", "/api/admin/sign-in", 405, "GET, HEAD, POST"],
      ["POST", "/api/admin/assets/admin.js", 405, "GET, HEAD"],
    ]);
  });

  test("an unknown host is 404; /api/admin is a redirect to /api/admin/", async () => {
    expect((await client("nowhere.test").get("/api/admin/sign-in")).status).toBe(404);
    const bare = await client().get("/api/admin");
    expect([bare.status, bare.headers.get("location")]).toEqual([303, "/api/admin/"]);
  });

  test("security headers on every answer: pages, redirects, errors, assets", async () => {
    const answers = [
      await client().get("/api/admin/sign-in"),
      await client().get("/api/admin/"),
      await client("nowhere.test").get("/api/admin/"),
      await client().get("/api/admin/sign-in?apikey=x"),
      await client().get("/api/admin/assets/admin.css"),
      await client().get("/api/admin/assets/admin.js"),
      await (await signedIn()).get("/api/admin/"),
    ];
    for (const answer of answers) {
      for (const [name, value] of Object.entries(SECURITY))
        expect([name, answer.headers.get(name)]).toEqual([name, value]);
    }
    expect(answers[3].status).toBe(400);
    expect(answers[4].headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(answers[5].headers.get("content-type")).toBe("text/javascript; charset=utf-8");
  });

  test("the sign-in page: the Email field, its button, no script or style inline", async () => {
    const page = await client().get("/api/admin/sign-in");
    expect(page.status).toBe(200);
    expect(page.text.startsWith("<!doctype html>")).toBe(true);
    expect(page.text).toContain(
      '<label for="email">Email</label><input id="email" name="email" type="email"',
    );
    expect(page.text).toContain('<button type="submit">Email me a sign-in link</button>');
    expect(page.text).not.toMatch(/<script>|<style|style="/);
  });
});

describe("the sign-in form", () => {
  test("the owner's address queues a link on the host it was posted to; any other address gets the same answer", async () => {
    const before = (await mailOf("shop3")).length;
    const admin = client("shop3.test");
    const owner = await admin.post("/api/admin/sign-in", { email: "Owner@Shop3.test" });
    const stranger = await admin.post("/api/admin/sign-in", { email: "someone@else.test" });
    // Posted, then redirected: a reload of the page shown sends nothing again.
    const sentTo = "/api/admin/sign-in?sent";
    expect([owner.status, owner.headers.get("location")]).toEqual([303, sentTo]);
    expect([stranger.status, stranger.headers.get("location")]).toEqual([303, sentTo]);
    expect(owner.text).toBe(stranger.text);
    const shown = await admin.get(sentTo);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(EMAIL_SENT.replace(/'/g, "&#39;"));
    // Queued once the answer has gone (the owner's answer waits for no write).
    const mail = await eventually(async () => {
      const queued = (await mailOf("shop3")).slice(before);
      return queued.length > 0 ? queued : undefined;
    });
    expect(mail.map((m) => [m.kind, m.recipient])).toEqual([["admin_sign_in", "owner@shop3.test"]]);
    // The token is made when the email goes out: the store's database never holds one.
    const LINK = /http:\/\/shop3\.test\/api\/admin\/sign-in\?token=[A-Za-z0-9_-]{43}/;
    const delivered = await eventually(() =>
      readdirSync(mailDir).find((name) => name.startsWith(`shop3-${mail[0].id}-`)),
    );
    const url =
      LINK.exec(parseMessage(readFileSync(join(mailDir, delivered), "latin1")).text)?.[0] ?? "";
    expect(url).not.toBe("");
    // Marked sent just after the file is written.
    const stored = await eventually(async () =>
      (await mailOf("shop3")).find((m) => m.id === mail[0].id && m.status === "sent"),
    );
    expect(LINK.test(`${stored.text}${stored.html}`)).toBe(false);
    expect(stored.text).toContain("http://shop3.test/api/admin/sign-in?token=TOKEN-MADE-WHEN-SENT");
    expect(
      (await client("shop3.test").get(new URL(url).pathname + new URL(url).search)).status,
    ).toBe(303);
  });

  test("5 posts per store per 15 minutes (whatever the address), then a 429 page", async () => {
    const store = "shop2.test";
    for (let i = 0; i < 5; i++)
      expect(
        (await client(store).post("/api/admin/sign-in", { email: `x${i}@y.test` })).status,
      ).toBe(303);
    const sixth = await client(store).post("/api/admin/sign-in", { email: "owner@shop2.test" });
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get("retry-after"))).toBeGreaterThan(800);
    expect(sixth.text).toContain("Too many sign-in requests");
  });

  /** The sign-in form posted from its own page, as sent (a stream may be cut as it likes). */
  const postSignIn = (body: BodyInit, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${server.url}/api/admin/sign-in`, {
      method: "POST",
      headers: {
        Host: "shop1.test",
        Origin: "http://shop1.test",
        "Content-Type": "application/x-www-form-urlencoded",
        ...headers,
      },
      body,
      signal,
    });

  /** Whether the answer closes its connection (Deno may say `close, close`: the app's and its own). */
  const closes = (answer: Response) =>
    (answer.headers.get("connection") ?? "").split(/\s*,\s*/).every((token) => token === "close");

  const FORM_TOO_LARGE =
    "The form is larger than 16384 bytes; shorten what you typed and send it again.";

  // The rest of a body of up to 8 MiB is read and thrown away, and the connection kept: a
  // proxy still sending it would otherwise meet a broken pipe and show 502. (Deno closes a
  // connection after most requests with a body, read or not.)
  const closesOnDeno = serverRunsOnDeno();
  test("a form over 16 KiB sent in chunks is a 413 page, however it is cut", async () => {
    const chunk = new TextEncoder().encode("a".repeat(8192));
    for (const chunks of [3, 13]) {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("email=x&pad="));
          for (let i = 0; i < chunks; i++) controller.enqueue(chunk);
          controller.close();
        },
      });
      // The answer never came for 13 chunks: bounded.
      const answer = await postSignIn(body, {}, AbortSignal.timeout(30_000));
      expect([chunks, answer.status, closes(answer)]).toEqual([chunks, 413, closesOnDeno]);
      expect(await answer.text()).toContain(FORM_TOO_LARGE);
    }
  });

  // Over 8 MiB the connection closes unread, as for the API (test/conformance.test.ts).
  test("a form declared over 16 KiB is the same 413 page", async () => {
    const answer = await postSignIn(`email=x&pad=${"a".repeat(16_384)}`);
    expect([answer.status, closes(answer)]).toEqual([413, closesOnDeno]);
    expect(await answer.text()).toContain(FORM_TOO_LARGE);
  });

  test("a form with a Content-Encoding is a 415 page, never read as plain text", async () => {
    const answer = await postSignIn("email=owner%40shop1.test", { "Content-Encoding": "gzip" });
    expect(answer.status).toBe(415);
    expect(await answer.text()).toContain("Send the body uncompressed");
  });

  test("a cross-origin or header-less post is refused with a 403 page", async () => {
    const variants: Record<string, string>[] = [
      {},
      { Origin: "null" },
      { Origin: "http://evil.test" },
      { "Sec-Fetch-Site": "cross-site", Origin: "http://shop1.test" },
    ];
    for (const headers of variants) {
      expect(
        (await client().post("/api/admin/sign-in", { email: "owner@shop1.test" }, headers)).status,
      ).toBe(403);
    }
    // What Chrome sends over plain HTTP on a host that is not *.localhost: it says so.
    const plain = await client().post(
      "/api/admin/sign-in",
      { email: "owner@shop1.test" },
      { Origin: "null" },
    );
    expect(plain.text).toContain(
      "Over plain HTTP browsers do not say which page a form comes from, except on localhost host names: open this screen over HTTPS (or, while developing, at a *.localhost host name).",
    );
    // On a *.localhost host a browser says so: such a post is not one of its, and gets the usual page.
    const local = await new AdminClient(server.url, "shop1.localhost").post(
      "/api/admin/sign-in",
      { email: "owner@shop1.test" },
      { Origin: "null" },
    );
    expect([local.status, local.text.includes("Over plain HTTP")]).toEqual([403, false]);
  });
});

describe("keys on the screen (no JavaScript: forms and redirects)", () => {
  test("create → the key shown once in #new-key → it works on the store API → delete (confirm) → 401", async () => {
    const admin = await signedIn();
    const before = (await mailOf("shop1")).length;
    const created = await admin.post("/api/admin/keys", ORDERS_WRITE);
    expect([created.status, created.headers.get("location")]).toEqual([303, "/api/admin/keys/new"]);
    // A HEAD (a link checker, a monitor holding the cookie) does not use up the one showing.
    const looked = await admin.head("/api/admin/keys/new");
    expect([looked.status, looked.text]).toEqual([200, ""]);
    const shown = await admin.get("/api/admin/keys/new");
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(NOT_SHOWN_AGAIN);
    const secret = textOfId(shown.text, "new-key") ?? "";
    expect(secret).toMatch(/^svc_sk_[A-Za-z0-9]{40}$/);
    expect((await send(server.url, "/api/v1/orders", { key: secret })).status).toBe(200);
    expect((await send(server.url, "/api/v1/products", { key: secret })).status).toBe(403);

    // Reloading (or going back) never shows it again.
    const reload = await admin.get("/api/admin/keys/new");
    expect([reload.status, reload.headers.get("location")]).toEqual([303, "/api/admin/"]);
    const screen = await admin.get("/api/admin/");
    expect(screen.text).not.toContain(secret);
    expect(screen.text).toContain(`svc_sk_…${secret.slice(-4)}`);
    expect(screen.text).toContain('<td data-label="Orders">Read and update</td>');
    expect(screen.text).toContain(
      '<td data-label="Expires">No limit</td><td data-label="Last used">',
    );
    const id = /action="\/api\/admin\/keys\/(\d+)\/delete"/.exec(screen.text)?.[1];

    const confirm = await admin.get(`/api/admin/keys/${id}/delete`);
    expect(confirm.text).toContain('<button type="submit" class="danger">Delete key</button>');
    const deleted = await admin.post(`/api/admin/keys/${id}/delete`);
    expect([deleted.status, deleted.headers.get("location")]).toEqual([303, "/api/admin/"]);
    expect((await send(server.url, "/api/v1/orders", { key: secret })).status).toBe(401);
    expect((await admin.get("/api/admin/")).text).toContain(
      `The key <strong dir="auto">ERP</strong> (svc_sk_…${secret.slice(-4)}) was deleted; it no longer works.`,
    );
    expect((await admin.post(`/api/admin/keys/${id}/delete`)).status).toBe(404);

    const mail = (await mailOf("shop1")).slice(before);
    expect(mail.map((m) => [m.kind, m.recipient])).toEqual([
      ["key_created", "owner@shop1.test"],
      ["key_deleted", "owner@shop1.test"],
    ]);
    expect(mail.map((m) => m.text).join("\n")).not.toContain(secret);
  });

  test("keys created before the first is shown (two tabs) are each shown once, in turn; a deletion keeps them", async () => {
    const admin = await signedIn("shop3.test");
    for (const name of ["Tab A", "Tab B"])
      expect((await admin.post("/api/admin/keys", { ...ORDERS_WRITE, name })).status).toBe(303);
    const first = await admin.get("/api/admin/keys/new");
    expect(first.text).toContain("Tab A");
    expect(first.text).toContain('<a href="/api/admin/keys/new">Show the next new key</a>');
    const second = await admin.get("/api/admin/keys/new");
    expect(second.text).toContain("Tab B");
    expect(second.text).not.toContain("Show the next new key");
    const secrets = [first, second].map((page) => textOfId(page.text, "new-key") ?? "");
    for (const secret of secrets)
      expect(
        (await send(server.url, "/api/v1/orders", { key: secret, host: "shop3.test" })).status,
      ).toBe(200);
    expect((await admin.get("/api/admin/keys/new")).status).toBe(303);

    expect((await admin.post("/api/admin/keys", { ...ORDERS_WRITE, name: "Tab C" })).status).toBe(
      303,
    );
    expect((await admin.post("/api/admin/keys/1/delete")).status).toBe(303);
    expect((await admin.get("/api/admin/")).text).toContain("was deleted; it no longer works.");
    const third = await admin.get("/api/admin/keys/new");
    expect(third.text).toContain("Tab C");
    expect(textOfId(third.text, "new-key")).toMatch(/^svc_sk_[A-Za-z0-9]{40}$/);
  });

  test("store text is escaped and rendered with dir=auto", async () => {
    const screen = await (await signedIn()).get("/api/admin/");
    expect(screen.text).toContain('<h1 dir="auto">חנות הבדיקה &lt;b&gt;</h1>');
  });

  test("bad input re-shows the form with what to fix (400) and keeps what was typed", async () => {
    const admin = await signedIn();
    const noName = await admin.post("/api/admin/keys", { ...ORDERS_WRITE, name: "  " });
    expect(noName.status).toBe(400);
    expect(noName.text).toContain("Name is required.");
    const nul = await admin.post("/api/admin/keys", { ...ORDERS_WRITE, name: "ab\u0000cd" });
    expect(nul.status).toBe(400);
    // Bytes that are not UTF-8 (or an encoded surrogate) would be named U+FFFD: refused.
    for (const name of ["%FF%FE", "%ED%A0%80", "%E9t%E9", "100%"]) {
      const bad = await admin.postEncoded("/api/admin/keys", `name=${name}&orders=read`);
      expect([name, bad.status]).toEqual([name, 400]);
      expect(bad.text).toContain("The form holds text that is not valid UTF-8");
    }
    // Reloading the re-shown form (a GET of the form's address) goes back to the screen.
    const reload = await admin.get("/api/admin/keys");
    expect([reload.status, reload.headers.get("location")]).toEqual([303, "/api/admin/"]);
    const hebrew = await admin.postEncoded(
      "/api/admin/keys",
      `name=${encodeURIComponent("מפתח")}&orders=read`,
    );
    expect(hebrew.status).toBe(303);
    expect((await admin.get("/api/admin/keys/new")).text).toContain("מפתח");
    expect(nul.text).toContain("Name must be valid Unicode text without NUL characters.");
    // Shown again without the NUL (a page cannot carry one), focused and tied to the error.
    expect(nul.text).toContain('value="abcd" autofocus="" aria-describedby="page-error"/>');
    expect(nul.text).toContain('<p class="message error" role="alert" id="page-error">');
    // A name is counted in characters by the server alone: no maxlength cuts 😀 at 50.
    expect(nul.text).not.toContain("maxlength");
    const nothing = await admin.post("/api/admin/keys", {
      ...ORDERS_WRITE,
      name: "Nothing",
      orders: "none",
    });
    expect(nothing.status).toBe(400);
    expect(nothing.text).toContain(
      "Permissions must give read or write access to at least one area.",
    );
    expect(nothing.text).toContain('value="Nothing"');
    const tampered = await admin.post("/api/admin/keys", { ...ORDERS_WRITE, expires: "toString" });
    expect(tampered.status).toBe(400);
    expect(tampered.text).toContain("Expires takes never, 30d, 90d or 1y");
  });

  test("a form sent as another content type is a 415 page saying how to send it; nothing is made", async () => {
    const admin = await signedIn("shop3.test");
    for (const type of ["text/plain", "multipart/form-data; boundary=x", "application/json"]) {
      const sent = await admin.post(
        "/api/admin/keys",
        { ...ORDERS_WRITE, name: "typed" },
        { "Sec-Fetch-Site": "same-origin", "Content-Type": type },
      );
      expect([type, sent.status]).toEqual([type, 415]);
      expect(sent.text).toContain("<title>Wrong kind of form");
      expect(sent.text).toContain(
        "Send this form as application/x-www-form-urlencoded, as the page does; reload the page and try again.",
      );
    }
    expect((await admin.get("/api/admin/")).text).not.toContain("typed");
  });

  test("five active keys: the form says so and a sixth is refused with that sentence (409)", async () => {
    const admin = await signedIn("shop2.test");
    for (let i = 1; i <= 5; i++)
      expect((await admin.post("/api/admin/keys", { ...ORDERS_WRITE, name: `k${i}` })).status).toBe(
        303,
      );
    const screen = await admin.get("/api/admin/");
    expect(screen.text).toContain("5 of 5 active keys in use.");
    expect(screen.text).toContain(LIMIT_SENTENCE);
    const sixth = await admin.post("/api/admin/keys", { ...ORDERS_WRITE, name: "k6" });
    expect(sixth.status).toBe(409);
    expect(sixth.text).toContain(`role="alert" id="page-error">${LIMIT_SENTENCE}</p>`);
  });
});

describe("CSRF and sessions", () => {
  test("a post needs the same origin and the session's form token", async () => {
    const admin = await signedIn();
    const refused = [
      await admin.post("/api/admin/keys", ORDERS_WRITE, {}),
      await admin.post("/api/admin/keys", ORDERS_WRITE, { Origin: "null" }),
      await admin.post("/api/admin/keys", ORDERS_WRITE, { Origin: "http://evil.test" }),
      await admin.post("/api/admin/keys", ORDERS_WRITE, {
        "Sec-Fetch-Site": "same-site",
        Origin: "http://shop1.test",
      }),
      await admin.post("/api/admin/keys", { ...ORDERS_WRITE, formToken: "wrong" }),
      await admin.post("/api/admin/keys", { ...ORDERS_WRITE, formToken: "" }),
    ];
    expect(refused.map((a) => a.status)).toEqual([403, 403, 403, 403, 403, 403]);
    expect(refused[0].text).toContain("This form was not sent from this page");
    // Origin alone (no Sec-Fetch-Site) equal to the page's own is accepted.
    expect(
      (
        await admin.post(
          "/api/admin/keys",
          { ...ORDERS_WRITE, name: "via origin" },
          { Origin: "http://shop1.test" },
        )
      ).status,
    ).toBe(303);
  });

  test("another session's form token is refused", async () => {
    const one = await signedIn();
    const two = await signedIn();
    expect(one.formToken).not.toBe(two.formToken);
    const stale = await one.post("/api/admin/keys", {
      ...ORDERS_WRITE,
      formToken: two.formToken ?? "",
    });
    expect(stale.status).toBe(403);
    expect(stale.text).toContain(
      "This form is from a page opened before you last signed in; reload the page and send it again.",
    );
  });

  test("sign out ends the session: the old cookie leads back to sign in", async () => {
    const admin = await signedIn();
    const cookie = admin.cookie;
    const out = await admin.post("/api/admin/sign-out");
    expect([out.status, out.headers.get("location")]).toEqual([303, "/api/admin/sign-in"]);
    expect(out.headers.get("set-cookie")).toContain("storeapi_admin=; Max-Age=0; Path=/api/admin");
    admin.cookie = cookie;
    // A tab still open on the screen: its next page or form says the session ended.
    const page = await admin.get("/api/admin/");
    const form = await admin.post("/api/admin/keys", ORDERS_WRITE);
    for (const answer of [page, form])
      expect([answer.status, answer.headers.get("location")]).toEqual([
        303,
        "/api/admin/sign-in?ended",
      ]);
    const told = await admin.get("/api/admin/sign-in?ended");
    expect(told.text).toContain(SESSION_ENDED);
  });

  test("a second session cookie of the same name (set for a parent domain) does not sign the admin out", async () => {
    const admin = await signedIn();
    for (const planted of ["storeapi_admin=bogus", `storeapi_admin=${"x".repeat(43)}`]) {
      const both = await admin.get("/api/admin/", { Cookie: `${planted}; ${admin.cookie}` });
      expect([planted, both.status]).toEqual([planted, 200]);
    }
    // A cookie that was never a session id is no session that ended.
    const made = await client().get("/api/admin/", { Cookie: "storeapi_admin=%ff%00%zz" });
    expect([made.status, made.headers.get("location")]).toEqual([303, "/api/admin/sign-in"]);
  });

  test("a session is bound to its store: shop1's cookie does not open shop2's screen", async () => {
    const admin = await signedIn();
    const elsewhere = new AdminClient(server.url, "shop2.test");
    elsewhere.cookie = admin.cookie;
    expect((await elsewhere.get("/api/admin/")).status).toBe(303);
  });
});

describe("the per-IP limit", () => {
  test(
    "20 sign-in form posts per client IP per 15 minutes across stores",
    async () => {
      const fresh = await startTestServer({
        stores: [
          testStore({ keys: [] }),
          otherStore({ keys: [] }),
          testStore({ slug: "shop3", domain: "shop3.test", keys: [] }),
        ],
      });
      try {
        const post = (host: string) =>
          new AdminClient(fresh.url, host).post("/api/admin/sign-in", { email: "a@b.test" });
        const statuses: number[] = [];
        for (let i = 0; i < 20; i++)
          statuses.push((await post(i % 2 ? "shop1.test" : "shop2.test")).status);
        expect(statuses.filter((s) => s === 303).length).toBe(10); // 5 per store
        const third = await post("shop3.test"); // a store whose own limit is untouched
        expect(third.status).toBe(429);
        expect(third.text).toContain("Too many sign-in requests");
      } finally {
        await fresh.stop();
      }
    },
    SLOW,
  );
});

describe("the key-create limit", () => {
  test(
    "20 creates per store per hour on the screen, then the screen again with 429 and Retry-After",
    async () => {
      const fresh = await startTestServer({ stores: [testStore({ keys: [] })] });
      try {
        const admin = new AdminClient(fresh.url);
        expect((await admin.signIn(await signInToken(fresh.dataDir, "shop1"))).status).toBe(303);
        const statuses: number[] = [];
        const create = async () =>
          statuses.push((await admin.post("/api/admin/keys", ORDERS_WRITE)).status);
        const deleteAll = async () => {
          const screen = (await admin.get("/api/admin/")).text;
          for (const [, id] of screen.matchAll(/action="\/api\/admin\/keys\/(\d+)\/delete"/g))
            expect((await admin.post(`/api/admin/keys/${id}/delete`)).status).toBe(303);
        };
        // Five keys made, then the sixth active key refused: a refused try does not count.
        for (let i = 0; i < 8; i++) await create();
        expect(statuses).toEqual([...Array(5).fill(303), ...Array(3).fill(409)]);
        for (let round = 0; round < 3; round++) {
          await deleteAll();
          for (let i = 0; i < 5; i++) await create();
        }
        expect(statuses.slice(8)).toEqual(Array(15).fill(303)); // 20 keys made in all
        await deleteAll();
        const stopped = await admin.post("/api/admin/keys", ORDERS_WRITE);
        expect(stopped.status).toBe(429);
        expect(Number(stopped.headers.get("retry-after"))).toBeWithin(3000, 3601);
        expect(stopped.text).toMatch(
          /20 keys were created for this store in the last hour; try again in (5\d|60) minutes\./,
        );
      } finally {
        await fresh.stop();
      }
    },
    SLOW,
  );
});
