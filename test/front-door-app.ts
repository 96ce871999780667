import { rmSync } from "node:fs";
import * as v from "valibot";
import { createApp } from "../src/app";
import { Platform } from "../src/db/platform";
import { StorePool } from "../src/db/pool";
import { buildDeps } from "../src/deps";
import { CidrList } from "../src/http/cidr";
import { ok } from "../src/http/respond";
import { idParams } from "../src/http/schemas";
import { loadFixture } from "../src/load/load";
import { StoreRegistry } from "../src/registry";
import { defineRoute, type RouteDef } from "../src/routes/define";
import { type ApiAnswer, readAnswer, tempDir } from "./helpers";

/**
 * Synthetic endpoints for checks 10–13, so the front door is tested on a known route
 * table whatever the real one holds at the moment.
 */
export const syntheticRoutes: RouteDef[] = [
  defineRoute({
    method: "GET",
    path: "/things",
    area: "products",
    summary: "list",
    query: v.strictObject({
      limit: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, "must be a number."))),
    }),
    handler: async (c) => ok(c, []),
  }),
  defineRoute({
    method: "POST",
    path: "/things",
    area: "products",
    summary: "create",
    body: v.strictObject({ name: v.string() }),
    handler: async (c, { body }) => ok(c, body, 201),
  }),
  defineRoute({
    method: "PATCH",
    path: "/things/:id",
    area: "products",
    summary: "update",
    params: idParams,
    body: v.strictObject({ name: v.string() }),
    handler: async (c) => ok(c, { id: 1 }),
  }),
];

export interface InProcessOptions {
  stores: unknown[];
  allowHttp?: boolean;
  trustProxy?: string;
  rateLimit?: number;
  authFailureLimit?: number;
  routes?: RouteDef[];
}

export interface InProcessApp {
  clock: { now: number };
  request(path: string, options?: InProcessRequest): Promise<ApiAnswer>;
  stop(): Promise<void>;
}

export interface InProcessRequest {
  method?: string;
  host?: string;
  key?: string | null;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  peerIp?: string;
  tls?: boolean;
}

/** The app from `createApp` over a real fixture, with a clock the test moves. */
export async function startInProcess(
  options: InProcessOptions,
  defaultKey: string,
): Promise<InProcessApp> {
  const dataDir = tempDir("storeapi-fd-");
  await loadFixture(dataDir, { stores: options.stores });
  const platform = await Platform.open(dataDir);
  const registry = new StoreRegistry(platform, "localhost");
  await registry.load();
  const pool = new StorePool(dataDir);
  const clock = { now: Date.UTC(2030, 0, 1, 12, 0, 30) };
  const deps = buildDeps({
    registry,
    pool,
    platform,
    rateLimit: options.rateLimit ?? 120,
    authFailureLimit: options.authFailureLimit ?? 20,
    allowHttp: options.allowHttp ?? true,
    trustProxy: options.trustProxy ? CidrList.parse(options.trustProxy) : null,
    cursorSecret: "test-secret",
    openapi: () => ({ openapi: "3.1.0" }),
    docsHtml: () => "<html></html>",
    log: () => {},
    logError: () => {},
    onMailQueued: () => {},
    beforeMailQueued: async () => {},
    now: () => clock.now,
  });
  const app = createApp(deps, options.routes ?? syntheticRoutes);
  return {
    clock,
    async request(path, r = {}) {
      const headers: Record<string, string> = { Host: r.host ?? "shop1.test", ...r.headers };
      const key = r.key === undefined ? defaultKey : r.key;
      if (key !== null) headers.Authorization ??= `Bearer ${key}`;
      let body = r.raw;
      if (r.body !== undefined) {
        body = JSON.stringify(r.body);
        headers["Content-Type"] ??= "application/json";
      }
      const request = new Request(`http://in-process${path}`, {
        method: r.method ?? "GET",
        headers,
        body,
      });
      return readAnswer(
        await app.fetch(request, { peerIp: r.peerIp ?? "192.0.2.1", tls: r.tls ?? false }),
      );
    },
    async stop() {
      await deps.usage.flush();
      await pool.close();
      await platform.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
