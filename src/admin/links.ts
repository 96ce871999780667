import { randomBytes } from "node:crypto";
import type { Queryable } from "../db/driver";
import { digestSecret } from "../keys/secret";

/** How long a sign-in link to the store admin's screen works (management-api.md §3). */
export const ADMIN_LINK_TTL_MS = 15 * 60_000;

export interface AdminLink {
  url: string;
  token: string;
  expiresAt: number;
}

/** `https://{domain}`, or the origin given (which the caller has checked). */
export const adminLinkUrl = (origin: string, token: string) => `${origin}/api/admin/sign-in?token=${token}`;

/**
 * Makes a one-time sign-in link for a store: 32 random bytes as base64url (43 URL-safe
 * characters), kept only as its digest; expired links are purged as new ones are made.
 */
export async function createAdminLink(db: Queryable, slug: string, origin: string, now: number): Promise<AdminLink> {
  const token = randomBytes(32).toString("base64url");
  const expiresAt = now + ADMIN_LINK_TTL_MS;
  await db.run("DELETE FROM admin_links WHERE expires_at <= ?", [now]);
  await db.run("INSERT INTO admin_links (digest, slug, created_at, expires_at) VALUES (?, ?, ?, ?)", [
    digestSecret(token),
    slug,
    now,
    expiresAt,
  ]);
  return { url: adminLinkUrl(origin, token), token, expiresAt };
}

/** An origin for a link: `http(s)://host[:port]` with nothing after it; null when it is not one. */
export function parseOrigin(text: string): string | null {
  try {
    const url = new URL(text);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    if (url.origin.toLowerCase() !== text.replace(/\/$/, "").toLowerCase()) return null;
    return url.origin;
  } catch {
    return null;
  }
}
