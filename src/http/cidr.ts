/** IP address ranges for `--trust-proxy` (IPv4 and IPv6; IPv4-mapped IPv6 counts as IPv4). */

export type Ip = { v6: boolean; value: bigint };

interface Range {
  v6: boolean;
  base: bigint;
  bits: number;
}

function parseV4(text: string): bigint | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    value = (value << 8n) | BigInt(Number(part));
  }
  return value;
}

function parseV6(text: string): bigint | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  const expand = (list: string[]): string[] | null => {
    const last = list[list.length - 1];
    if (last?.includes(".")) {
      const v4 = parseV4(last);
      if (v4 === null) return null;
      return [
        ...list.slice(0, -1),
        ((v4 >> 16n) & 0xffffn).toString(16),
        (v4 & 0xffffn).toString(16),
      ];
    }
    return list;
  };
  const h = expand(head);
  const t = expand(tail);
  if (!h || !t) return null;
  const missing = 8 - h.length - t.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  let value = 0n;
  for (const group of [...h, ...Array(Math.max(missing, 0)).fill("0"), ...t]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    value = (value << 16n) | BigInt(parseInt(group, 16));
  }
  return value;
}

const MAPPED_PREFIX = 0xffffn << 32n;

/** An address as {v6, value}; IPv4-mapped IPv6 addresses become IPv4. */
export function parseIp(text: string): Ip | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const v4 = parseV4(bare);
  if (v4 !== null) return { v6: false, value: v4 };
  const v6 = parseV6(bare.split("%")[0]);
  if (v6 === null) return null;
  if (v6 >> 32n === 0xffffn && (v6 & ~0xffffffffn) === MAPPED_PREFIX)
    return { v6: false, value: v6 & 0xffffffffn };
  return { v6: true, value: v6 };
}

/** An address as written in `X-Forwarded-For`, which some proxies give with a port. */
export function parseHop(text: string): Ip | null {
  const hop = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(hop);
  if (bracketed) return parseIp(bracketed[1]);
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(hop);
  return parseIp(v4WithPort ? v4WithPort[1] : hop);
}

/** One canonical text per address (IPv4 dotted; IPv6 as eight lower-case hex groups). */
export function formatIp(ip: Ip): string {
  if (!ip.v6)
    return [24n, 16n, 8n, 0n].map((shift) => String((ip.value >> shift) & 0xffn)).join(".");
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n)
    groups.push(((ip.value >> shift) & 0xffffn).toString(16));
  // The URL standard writes IPv6 as RFC 5952 does, as nginx and Caddy log it (`2001:db8::1`).
  return new URL(`http://[${groups.join(":")}]`).hostname.slice(1, -1);
}

/**
 * What failed keys are counted against: the IPv4 address, or the IPv6 /64 (one
 * subscriber's usual allocation, so rotating addresses inside it gains nothing).
 */
export function failureBucket(address: string): string {
  const ip = parseIp(address);
  if (!ip) return address.slice(0, 64);
  if (!ip.v6) return formatIp(ip);
  return `${formatIp({ v6: true, value: (ip.value >> 64n) << 64n })}/64`;
}

export class CidrList {
  private constructor(private readonly ranges: Range[]) {}

  /** Parses `10.0.0.0/8,::1`; throws with the offending entry when one is not a range, or none is given. */
  static parse(list: string): CidrList {
    const entries = list.split(",").map((s) => s.trim());
    if (entries.every((entry) => entry === ""))
      throw new Error(`"${list}" names no address; give CIDR ranges like 127.0.0.1/32,10.0.0.0/8`);
    const ranges = entries.filter(Boolean).map((entry) => {
      const [address, prefix, extra] = entry.split("/");
      const ip = parseIp(address);
      const width = ip?.v6 ? 128 : 32;
      const bits = prefix === undefined ? width : Number(prefix);
      if (
        !ip ||
        !Number.isInteger(bits) ||
        bits < 0 ||
        bits > width ||
        extra !== undefined ||
        (prefix !== undefined && !/^\d+$/.test(prefix))
      ) {
        throw new Error(`"${entry}" is not an IP address or CIDR range`);
      }
      return { v6: ip.v6, base: mask(ip.value, bits, width), bits };
    });
    return new CidrList(ranges);
  }

  /**
   * Whether the ranges together hold every IPv4 or every IPv6 address (`0.0.0.0/0`, or
   * `0.0.0.0/1,128.0.0.0/1`): then any client is a proxy.
   */
  get trustsAnyone(): boolean {
    return [false, true].some((v6) => coversEverything(this.ranges.filter((r) => r.v6 === v6)));
  }

  contains(address: string | Ip): boolean {
    const ip = typeof address === "string" ? parseIp(address) : address;
    if (!ip) return false;
    return this.ranges.some(
      (r) => r.v6 === ip.v6 && mask(ip.value, r.bits, r.v6 ? 128 : 32) === r.base,
    );
  }
}

function coversEverything(ranges: Range[]): boolean {
  const width = ranges[0]?.v6 ? 128n : 32n;
  let next = 0n; // the lowest address not yet covered
  for (const r of [...ranges].sort((a, b) => (a.base < b.base ? -1 : a.base > b.base ? 1 : 0))) {
    if (r.base > next) return false;
    const end = r.base + (1n << (width - BigInt(r.bits)));
    if (end > next) next = end;
  }
  return ranges.length > 0 && next === 1n << width;
}

function mask(value: bigint, bits: number, width: number): bigint {
  const shift = BigInt(width - bits);
  return (value >> shift) << shift;
}
