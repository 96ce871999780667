import { digestSecret } from "../keys/secret";

/** 32 random bytes as base64url: 43 URL-safe characters, 256 bits. */
export function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** What the database keeps instead of a link token or session id (SHA-256, like API keys). */
export const digestOf = digestSecret;
