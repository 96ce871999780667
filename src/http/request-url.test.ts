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
