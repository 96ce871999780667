import { hash } from "node:crypto";

const KEY_PREFIX = "svc_sk_";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const BODY_LENGTH = 40; // 40 × log2(62) ≈ 238 bits
/** Accepted shape of a presented key; anything else is 401 without a lookup. */
export const KEY_PATTERN = /^svc_sk_[A-Za-z0-9]{32,128}$/;

/** A new key from the CSPRNG, alphabet chosen by rejection sampling (no modulo bias). */
export function generateSecret(): string {
  let body = "";
  while (body.length < BODY_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(64))) {
      if (byte < 248 && body.length < BODY_LENGTH) body += ALPHABET[byte % 62];
    }
  }
  return KEY_PREFIX + body;
}

/** What the database keeps instead of the key: its SHA-256, hex (one-shot hash: half the cost of createHash). */
export function digestSecret(secret: string): string {
  return hash("sha256", secret, "hex");
}

/** The display hint: `svc_sk_…abcd`. */
export function hintFor(secret: string): string {
  return `${KEY_PREFIX}…${secret.slice(-4)}`;
}
