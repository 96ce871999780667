export const AREAS = ["products", "orders", "customers", "leads"] as const;
export type Area = (typeof AREAS)[number];

export const ACCESS_LEVELS = ["none", "read", "write"] as const;
export type Access = (typeof ACCESS_LEVELS)[number];

export type Permissions = Record<Area, Access>;

export const NO_PERMISSIONS: Permissions = {
  products: "none",
  orders: "none",
  customers: "none",
  leads: "none",
};

export const isAccess = (value: unknown): value is Access =>
  typeof value === "string" && (ACCESS_LEVELS as readonly string[]).includes(value);

/** Deny by default: write implies read, anything unknown grants nothing. */
export function allows(permissions: Permissions, area: Area, needed: "read" | "write"): boolean {
  const granted = permissions[area];
  return needed === "read" ? granted === "read" || granted === "write" : granted === "write";
}

/** `products:write, orders:read` — the names the contract uses, for emails and CLI output. */
export function describePermissions(permissions: Permissions): string {
  const granted = AREAS.filter((area) => permissions[area] !== "none").map(
    (a) => `${a}:${permissions[a]}`,
  );
  return granted.length ? granted.join(", ") : "none";
}

/** Parses stored/fixture permissions; missing areas are `none`. */
export function normalizePermissions(input: Partial<Record<string, unknown>>): Permissions {
  const result: Permissions = { ...NO_PERMISSIONS };
  for (const area of AREAS) {
    const value = input[area];
    if (isAccess(value)) result[area] = value;
  }
  return result;
}
