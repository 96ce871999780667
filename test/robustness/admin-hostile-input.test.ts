import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { AdminClient, signInToken } from "../admin-support";
import { startTestServer, type TestServer, testStore } from "../helpers";

/**
 * The "API and keys" screen answers whatever a browser (or anything posing as one) sends
 * with a page or a redirect, never a 5xx, a stack trace or SQL. Mostly signed in with a
 * valid form token, so the forms' own checks are reached.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ stores: [testStore({ keys: [] })] });
}, 60_000);
afterAll(() => server.stop());

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

const printable = (maxLength: number) =>
  fc.string({ maxLength }).filter((s) => /^[\x20-\x7e]*$/.test(s));

const adminPath = fc.oneof(
  fc.constantFrom(
    "/api/admin/",
    "/api/admin",
    "/api/admin/keys",
    "/api/admin/keys/created",
    "/api/admin/keys/1/delete",
    "/api/admin/keys/x/delete",
    "/api/admin/keys/-1/delete",
    "/api/admin/keys/1e3/delete",
    "/api/admin/keys/99999999999999999999/delete",
    "/api/admin/sign-in",
    "/api/admin/sign-in?token=",
    "/api/admin/sign-in?token=%00",
    "/api/admin/sign-in?token=a&token=b",
    "/api/admin/sign-out",
    "/api/admin/%2e%2e/",
    "/api/admin//keys",
  ),
  fc.string({ maxLength: 30 }).map((s) => `/api/admin/${encodeURIComponent(s)}`),
);

const formFields = fc.dictionary(
  fc.constantFrom(
    "formToken",
    "name",
    "products",
    "orders",
    "customers",
    "leads",
    "expires",
    "email",
    "token",
    "x",
  ),
  fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.constant("x".repeat(5000)),
    fc.constantFrom("write", "read", "none", "never", "1y", "toString", "__proto__", "\u0000"),
  ),
);

/** Leaks a page must never show. */
const LEAK = /\bat .+\.tsx?:\d|SQLITE|sqlite_|SELECT |TypeError|RangeError/;

test("hostile requests to the admin screen never cause a 5xx or leak internals", async () => {
  const admin = new AdminClient(server.url);
  expect((await admin.signIn(await signInToken(server.dataDir, "shop1"))).status).toBe(303);
  const session = admin.cookie;
  const formToken = admin.formToken;
  expect(session).toBeDefined();
  expect(formToken).toBeDefined();
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"),
      adminPath,
      formFields,
      fc.boolean(),
      fc.constantFrom(
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json",
        "text/plain",
        "",
      ),
      fc.oneof(
        { weight: 4, arbitrary: fc.constant(session) },
        { weight: 1, arbitrary: printable(80).map((s) => `storeapi_admin=${s}`) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      ),
      fc.constantFrom("same-origin", "cross-site", "none", undefined),
      async (method, path, fields, withToken, type, cookie, site) => {
        const hasBody = method !== "GET" && method !== "HEAD";
        const form = { ...(withToken ? { formToken } : {}), ...fields };
        const headers: Record<string, string> = { Host: "shop1.test" };
        if (type) headers["Content-Type"] = type;
        if (cookie) headers.Cookie = cookie;
        if (site) headers["Sec-Fetch-Site"] = site;
        const response = await fetch(server.url + path, {
          method,
          headers,
          body: hasBody
            ? new URLSearchParams(form as Record<string, string>).toString()
            : undefined,
          redirect: "manual",
        });
        const text = await response.text();
        const what = `${method} ${path} ${type} ${JSON.stringify(fields).slice(0, 200)}`;
        expect(response.status, what).toBeLessThan(500);
        expect(LEAK.test(text), `${what}: ${text.slice(0, 300)}`).toBe(false);
      },
    ),
    { numRuns: RUNS * 5 },
  );
  // The screen still works afterwards, for a fresh session.
  const fresh = new AdminClient(server.url);
  expect((await fresh.signIn(await signInToken(server.dataDir, "shop1"))).status).toBe(303);
  expect((await fresh.get("/api/admin/")).status).toBe(200);
}, 120_000);
