/** Money travels as JSON numbers with at most 2 decimals and is stored as integer minor units. */

export const MAX_MINOR = 100_000_000_000; // 1,000,000,000.00: far above any real price or order

/** Minor units from a JSON number, or null if it is negative, not finite or has more than 2 decimals. */
export function toMinor(value: number): number | null {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return null;
  const minor = Math.round(value * 100);
  if (minor / 100 !== value || minor > MAX_MINOR) return null;
  return minor;
}

/** Like `toMinor` but allows negative amounts (discounts in coupons and promotions). */
export function toSignedMinor(value: number): number | null {
  if (typeof value !== "number" || !Number.isFinite(value)) return null;
  const magnitude = toMinor(Math.abs(value));
  return magnitude === null ? null : value < 0 ? -magnitude : magnitude;
}

/** The JSON number for an amount in minor units: exact to 2 decimals. */
export function fromMinor(minor: number): number {
  return minor / 100;
}

export function fromMinorOrNull(minor: number | null): number | null {
  return minor === null ? null : minor / 100;
}
