import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import {
  domainSchema,
  domainUnderPlatform,
  ownerEmailSchema,
  slugSchema,
  storeNameSchema,
} from "./rules";

const accepts = (schema: v.GenericSchema, value: unknown) => v.safeParse(schema, value).success;

describe("store rules", () => {
  test("a slug or domain too long says that length is what is wrong", () => {
    const message = (schema: v.GenericSchema, value: string) =>
      v.safeParse(schema, value).issues?.[0]?.message;
    expect(message(slugSchema, "a".repeat(64))).toBe("must be at most 63 characters.");
    expect(accepts(slugSchema, "a".repeat(63))).toBe(true);
    expect(message(domainSchema, `${"a".repeat(64)}.example.com`)).toBe(
      "must have labels (the parts between dots) of at most 63 characters.",
    );
    expect(message(domainSchema, `${"a".repeat(60)}.`.repeat(5).concat("com"))).toBe(
      "must be at most 253 characters.",
    );
  });
  test("domainSchema: a lower-cased host name of two labels or more", () => {
    expect(v.parse(domainSchema, "Shop.Example.COM")).toBe("shop.example.com");
    for (const ok of ["shop.example.com", "a.b", "xn--bcher-kva.example", "shop-1.example.co.il"])
      expect([ok, accepts(domainSchema, ok)]).toEqual([ok, true]);
    for (const bad of [
      "localhost",
      "shop",
      "shop.example.com.",
      "127.0.0.1",
      "10.0.0.010",
      "shop.123",
      "[::1]",
      "::1",
      "-shop.example.com",
      "shop..example.com",
      "shop.example.com:443",
      "",
      "a b.com",
    ]) {
      expect([bad, accepts(domainSchema, bad)]).toEqual([bad, false]);
    }
  });

  test("domainUnderPlatform: the platform domain itself and every name under it", () => {
    expect(domainUnderPlatform("shop1.localhost", "localhost")).toBe(true);
    expect(domainUnderPlatform("x.shop2.LOCALHOST", "localhost")).toBe(true);
    expect(domainUnderPlatform("stores.example.net", "Stores.Example.net.")).toBe(true);
    expect(domainUnderPlatform("shop1.example.com", "localhost")).toBe(false);
    expect(domainUnderPlatform("notlocalhost.com", "localhost")).toBe(false);
    expect(domainUnderPlatform("evilstores.example.net", "stores.example.net")).toBe(false);
  });

  test("ownerEmailSchema: exactly one address, nothing that could add a recipient or a header", () => {
    expect(accepts(ownerEmailSchema, "owner@shop1.example.com")).toBe(true);
    for (const bad of [
      "a@x.com, b@y.com",
      "a@x.com,b@y.com",
      "a@x.com\r\nBcc: e@evil.com",
      "a@x.com\n",
      "Owner <a@x.com>",
      "a@x.com b@y.com",
      "a@x.com;b@y.com",
      "not an email",
    ]) {
      expect([bad, accepts(ownerEmailSchema, bad)]).toEqual([bad, false]);
    }
  });

  test("storeNameSchema: 1 to 100 characters", () => {
    expect(accepts(storeNameSchema, "")).toBe(false);
    expect(accepts(storeNameSchema, "ש".repeat(100))).toBe(true);
    expect(accepts(storeNameSchema, "ש".repeat(101))).toBe(false);
  });
});
