import { describe, expect, test } from "bun:test";
import { CidrList, failureBucket, parseHop } from "../cidr";
import { clientIp, isSecure } from "./transport";

const trust = CidrList.parse("127.0.0.1, 10.0.0.0/8, ::1");

describe("clientIp", () => {
  test("without a trusted peer the socket address is the client, X-Forwarded-For ignored", () => {
    expect(clientIp("203.0.113.9", "1.1.1.1", trust)).toBe("203.0.113.9");
    expect(clientIp("127.0.0.1", "1.1.1.1", null)).toBe("127.0.0.1");
    expect(clientIp("::ffff:127.0.0.1", undefined, null)).toBe("127.0.0.1");
  });

  test("from a trusted peer: the right-most address not in the list", () => {
    expect(clientIp("127.0.0.1", "9.9.9.9", trust)).toBe("9.9.9.9");
    expect(clientIp("127.0.0.1", "1.1.1.1, 9.9.9.9, 10.1.2.3", trust)).toBe("9.9.9.9");
    expect(clientIp("::ffff:10.0.0.7", "9.9.9.9:4711", trust)).toBe("9.9.9.9");
    expect(clientIp("::1", "[2001:db8::1]:443", trust)).toBe("2001:db8::1");
    // Written as RFC 5952 does (as nginx and Caddy log it): the longest zero run is "::".
    expect(clientIp("::1", "1:0:0:2:0:0:0:3", trust)).toBe("1:0:0:2::3");
    expect(clientIp("::1", "2001:DB8:0:1:1:1:1:1", trust)).toBe("2001:db8:0:1:1:1:1:1");
  });

  test("a spoofed left part cannot choose the IP; garbage is its own bucket, never trusted", () => {
    expect(clientIp("127.0.0.1", "10.0.0.1, 8.8.8.8", trust)).toBe("8.8.8.8");
    expect(clientIp("127.0.0.1", "8.8.8.8, not-an-ip", trust)).toBe("not-an-ip");
    expect(clientIp("127.0.0.1", "10.0.0.1, 10.0.0.2", trust)).toBe("10.0.0.1");
    expect(clientIp("127.0.0.1", " , ", trust)).toBe("127.0.0.1");
  });
});

describe("isSecure", () => {
  test("TLS is secure; a trusted proxy's right-most X-Forwarded-Proto decides; untrusted peers are not believed", () => {
    expect(isSecure(true, false, undefined)).toBe(true);
    expect(isSecure(false, true, "https")).toBe(true);
    expect(isSecure(false, true, "HTTPS ")).toBe(true);
    expect(isSecure(false, true, "http, https")).toBe(true);
    expect(isSecure(false, true, "https, http")).toBe(false);
    expect(isSecure(false, true, undefined)).toBe(false);
    expect(isSecure(false, false, "https")).toBe(false);
  });
});

describe("cidr helpers", () => {
  test("ranges match IPv4, IPv6 and IPv4-mapped IPv6", () => {
    const list = CidrList.parse("192.168.0.0/16,2001:db8::/32");
    expect(list.contains("192.168.44.1")).toBe(true);
    expect(list.contains("::ffff:192.168.1.1")).toBe(true);
    expect(list.contains("192.169.0.1")).toBe(false);
    expect(list.contains("2001:db8:ffff::1")).toBe(true);
    expect(list.contains("2001:db9::1")).toBe(false);
    expect(list.contains("garbage")).toBe(false);
    expect(() => CidrList.parse("10.0.0.0/33")).toThrow(
      '"10.0.0.0/33" is not an IP address or CIDR range',
    );
    expect(() => CidrList.parse("nope")).toThrow('"nope" is not an IP address or CIDR range');
    // A second "/" was ignored (127.0.0.1/32/garbage trusted 127.0.0.1); "," trusted nobody.
    expect(() => CidrList.parse("127.0.0.1/32/garbage")).toThrow(
      '"127.0.0.1/32/garbage" is not an IP address or CIDR range',
    );
    expect(() => CidrList.parse(" , ")).toThrow('" , " names no address');
  });

  test("ranges that together hold every address of a family trust anyone", () => {
    const anyone = (list: string) => CidrList.parse(list).trustsAnyone;
    expect(anyone("0.0.0.0/0")).toBe(true);
    expect(anyone("::/0,10.0.0.0/8")).toBe(true);
    expect(anyone("128.0.0.0/1,10.0.0.0/8,0.0.0.0/1")).toBe(true);
    expect(anyone("0.0.0.0/2,64.0.0.0/2,128.0.0.0/1")).toBe(true);
    expect(anyone("::/1,8000::/1")).toBe(true);
    expect(anyone("0.0.0.0/1,128.0.0.0/2")).toBe(false);
    expect(anyone("0.0.0.0/1,::/1,8000::/2")).toBe(false);
    expect(anyone("0.0.0.0/1,8000::/1")).toBe(false);
    expect(anyone("127.0.0.1,10.0.0.0/8")).toBe(false);
  });

  test("hops with ports parse", () => {
    expect(parseHop("1.2.3.4:80")).toEqual({ v6: false, value: 0x01020304n });
    expect(parseHop("[::1]:80")).toEqual({ v6: true, value: 1n });
    expect(parseHop("1.2.3.4:")).toBeNull();
  });

  test("failures count per IPv4 address and per IPv6 /64", () => {
    expect(failureBucket("::ffff:1.2.3.4")).toBe("1.2.3.4");
    expect(failureBucket("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(failureBucket("2001:db8:1:2:bbbb::9")).toBe("2001:db8:1:2::/64");
    expect(failureBucket("unknown")).toBe("unknown");
  });
});
