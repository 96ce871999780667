import { describe, expect, test } from "bun:test";
import { requestPath, searchParamsOf } from "./request-url";

const path = (url: string) => requestPath({ url } as Request);

describe("request URLs in every form Bun and Deno hand over", () => {
  test("the path of an absolute URL, a bare /path (no Host) and an authority (CONNECT)", () => {
    expect(path("http://shop1.test:8080/api/v1/customers?limit=1")).toBe("/api/v1/customers");
    expect(path("/healthz")).toBe("/healthz");
    expect(path("/api/v1/%63ustomers?x=1")).toBe("/api/v1/customers");
    expect(path("http://[::1/a")).toBe("/a");
    expect(path("shop1.test:443")).toBe("/shop1.test:443");
    expect(path("http://shop1.test:443")).toBe("/shop1.test:443");
  });

  test("dot segments are resolved as Bun resolves them before the app (Deno hands them as sent)", () => {
    expect(path("http://h.test/api/v1/x/../orders/1")).toBe("/api/v1/orders/1");
    expect(path("http://h.test/api/v1/x/%2E%2e/orders/1?a=/../b")).toBe("/api/v1/orders/1");
    expect(path("/api/v1/./orders")).toBe("/api/v1/orders");
    expect(path("http://h.test/api/v1/..orders/1")).toBe("/api/v1/..orders/1"); // not a segment
  });

  test("a * is written %2A: Hono's router would take /* for its wildcard", () => {
    expect(path("http://h.test/*")).toBe("/%2A");
    expect(path("http://h.test/api/v1/orders/*")).toBe("/api/v1/orders/%2A");
  });

  test("query parameters never throw, and match new URL() where it works", () => {
    for (const url of [
      "http://h.test/a?apikey=1&b=%20x+y",
      "http://h.test/a",
      "http://h.test/a?",
      "http://h.test/a?x=1#frag",
    ]) {
      expect([...searchParamsOf(url)]).toEqual([...new URL(url).searchParams]);
    }
    expect(searchParamsOf("/healthz?apikey=x").get("apikey")).toBe("x");
    expect(searchParamsOf("http://[::1/a?apikey").has("apikey")).toBe(true);
    expect([...searchParamsOf("shop1.test:443")]).toEqual([]);
    expect([...searchParamsOf("http://shop1.test:443")]).toEqual([]);
  });
});
