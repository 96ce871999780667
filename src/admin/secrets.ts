import { digestSecret } from "../keys/secret";

/** What `randomToken` makes: a text of any other shape never was a token or session id. */
export const RANDOM_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** 32 random bytes as base64url: 43 URL-safe characters, 256 bits. */
export function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** What the database keeps instead of a link token or session id (SHA-256, like API keys). */
export const digestOf = digestSecret;
