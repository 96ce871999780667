import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Access, AREAS, type Area } from "../src/keys/permissions";
import { apiRoutes } from "../src/routes";
import { accessFor } from "../src/routes/define";
import { startTestServer, type TestServer, testStore } from "./helpers";

/**
 * Permission matrix: every endpoint in the route table × none/read/write on its area.
 * One store per area, so each key can hold the opposite of its level everywhere else
 * (a `none` key writes every other area): only the route's own area may count.
 */

const LEVELS: Access[] = ["none", "read", "write"];
const secretFor = (area: Area, level: Access) => `svc_sk_${`${area}${level}`.padEnd(40, "0")}`;
const hostFor = (area: Area) => `${area}.test`;

function storeFor(area: Area) {
  const keys = LEVELS.map((level) => {
    const others = level === "write" ? "none" : "write";
    const permissions = Object.fromEntries(AREAS.map((a) => [a, a === area ? level : others]));
    return { name: level, secret: secretFor(area, level), permissions };
  });
  return testStore({ slug: area, domain: hostFor(area), ownerEmail: `owner@${area}.test`, keys });
}

const concrete = (path: string) => `/api/v1${path.replace(/:\w+(\{[^}]*\})?/g, "1")}`;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    stores: AREAS.map(storeFor),
    flags: { "rate-limit": "100000" },
  });
});
afterAll(() => server.stop());

describe("permission matrix", () => {
  if (apiRoutes.length === 0) test.todo("the route table is empty so far");
  for (const route of apiRoutes) {
    const needed = accessFor(route.method);
    for (const level of LEVELS) {
      const permitted = level === "write" || (level === "read" && needed === "read");
      test(`${route.method} ${route.path} with ${route.area}:${level} → ${permitted ? "passes the scope check" : "403"}`, async () => {
        const answer = await server.request(concrete(route.path), {
          method: route.method,
          host: hostFor(route.area),
          key: secretFor(route.area, level),
          body: route.method === "GET" ? undefined : {},
        });
        const code = answer.json?.error?.code;
        if (permitted) {
          expect(code).not.toBe("insufficient_scope");
          expect(code).not.toBe("unauthorized");
          expect(code).not.toBe("method_not_allowed");
          expect(answer.status).toBeLessThan(500);
        } else {
          expect(answer.status).toBe(403);
          expect(answer.json.error).toEqual({
            code: "insufficient_scope",
            message: `This key lacks the "${route.area}:${needed}" permission this endpoint needs.`,
          });
        }
        expect(answer.headers.get("ratelimit-limit")).toBe("100000");
      });
    }
  }
});
