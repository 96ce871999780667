/** IP address ranges for `--trust-proxy` (IPv4 and IPv6; IPv4-mapped IPv6 counts as IPv4). */

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
      return [...list.slice(0, -1), ((v4 >> 16n) & 0xffffn).toString(16), (v4 & 0xffffn).toString(16)];
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
export function parseIp(text: string): { v6: boolean; value: bigint } | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const v4 = parseV4(bare);
  if (v4 !== null) return { v6: false, value: v4 };
  const v6 = parseV6(bare.split("%")[0]);
  if (v6 === null) return null;
  if (v6 >> 32n === 0xffffn && (v6 & ~0xffffffffn) === MAPPED_PREFIX) return { v6: false, value: v6 & 0xffffffffn };
  return { v6: true, value: v6 };
}

export class CidrList {
  private constructor(private readonly ranges: Range[]) {}

  /** Parses `10.0.0.0/8,::1`; throws with the offending entry when one is not a range. */
  static parse(list: string): CidrList {
    const ranges = list
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .map((entry) => {
        const [address, prefix] = entry.split("/");
        const ip = parseIp(address);
        const width = ip?.v6 ? 128 : 32;
        const bits = prefix === undefined ? width : Number(prefix);
        if (!ip || !Number.isInteger(bits) || bits < 0 || bits > width || (prefix !== undefined && !/^\d+$/.test(prefix))) {
          throw new Error(`"${entry}" is not an IP address or CIDR range`);
        }
        return { v6: ip.v6, base: mask(ip.value, bits, width), bits };
      });
    return new CidrList(ranges);
  }

  contains(address: string): boolean {
    const ip = parseIp(address);
    if (!ip) return false;
    return this.ranges.some((r) => r.v6 === ip.v6 && mask(ip.value, r.bits, r.v6 ? 128 : 32) === r.base);
  }
}

function mask(value: bigint, bits: number, width: number): bigint {
  const shift = BigInt(width - bits);
  return (value >> shift) << shift;
}
