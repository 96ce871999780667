import { hash } from "node:crypto";

const KEY_PREFIX = "svc_sk_";
/** A host key (management API): the same shape as a store key under its own prefix. */
export const HOST_KEY_PREFIX = "svc_hk_";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const BODY_LENGTH = 40; // 40 × log2(62) ≈ 238 bits
/** Accepted shape of a presented key; anything else is 401 without a lookup. */
export const KEY_PATTERN = /^svc_sk_[A-Za-z0-9]{32,128}$/;
export const HOST_KEY_PATTERN = /^svc_hk_[A-Za-z0-9]{32,128}$/;

/** A new key from the CSPRNG, alphabet chosen by rejection sampling (no modulo bias). */
export function generateSecret(prefix = KEY_PREFIX): string {
  let body = "";
  while (body.length < BODY_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(64))) {
      if (byte < 248 && body.length < BODY_LENGTH) body += ALPHABET[byte % 62];
    }
  }
  return prefix + body;
}

/** What the database keeps instead of the key: its SHA-256, hex (one-shot hash: half the cost of createHash). */
export function digestSecret(secret: string): string {
  return hash("sha256", secret, "hex");
}

const ANY_KEY = /svc_[sh]k_[A-Za-z0-9]+/g;
/** A key's body with its prefix lost: as long as the shortest body a key may have. */
const BARE_KEY_BODY = /[A-Za-z0-9]{32,}/g;
const MIXED = [/[a-z]/, /[A-Z]/, /[0-9]/];
/** The rest of a key split by a space after its prefix (already cut to its hint). */
const SPLIT_KEY_REST = /(svc_[sh]k_…[A-Za-z0-9]{0,4}\s+)([A-Za-z0-9]{8,})/g;

/**
 * `text` with every store or host key in it cut to its hint: for an answer or a log line's
 * path, where a client may have pasted one. Also cut to "…" and its last 4: a run of 32 or
 * more letters and digits of both cases (a key's body with its prefix lost), and the run
 * right after a key's prefix and a space (a key split in two).
 */
export function withoutKeys(text: string): string {
  if (text.length < 32 && !text.includes("svc_")) return text;
  const hinted = text.includes("svc_")
    ? text
        .replace(ANY_KEY, (key) => hintFor(key))
        .replace(SPLIT_KEY_REST, (_, head, rest) => `${head}…${rest.slice(-4)}`)
    : text;
  return hinted.replace(BARE_KEY_BODY, (run) =>
    MIXED.every((kind) => kind.test(run)) ? `…${run.slice(-4)}` : run,
  );
}

/** The display hint: `svc_sk_…abcd` (`svc_hk_…abcd` for a host key). */
export function hintFor(secret: string): string {
  return `${secret.slice(0, KEY_PREFIX.length)}…${secret.slice(-4)}`;
}
