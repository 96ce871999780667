import type { Queryable } from "../db/driver";
import { isActive } from "../keys/repository";
import {
  digestSecret,
  generateSecret,
  HOST_KEY_PATTERN,
  HOST_KEY_PREFIX,
  hintFor,
} from "../keys/secret";

/** A host key of the management API (management-api.md §1), as platform.db keeps it. */
export interface HostKey {
  id: number;
  name: string;
  digest: string;
  hint: string;
  createdAt: number;
  expiresAt: number | null;
  deletedAt: number | null;
}

interface HostKeyRow {
  id: number;
  name: string;
  digest: string;
  hint: string;
  created_at: number;
  expires_at: number | null;
  deleted_at: number | null;
}

const toHostKey = (row: HostKeyRow): HostKey => ({
  id: row.id,
  name: row.name,
  digest: row.digest,
  hint: row.hint,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  deletedAt: row.deleted_at,
});

export async function listHostKeys(db: Queryable): Promise<HostKey[]> {
  return (
    await db.all<HostKeyRow>("SELECT * FROM host_keys WHERE deleted_at IS NULL ORDER BY id")
  ).map(toHostKey);
}

/** Makes a host key; returns it with its secret, which is never stored or shown again. */
export async function createHostKey(
  db: Queryable,
  name: string,
  expiresAt: number | null,
  now: number,
) {
  const secret = generateSecret(HOST_KEY_PREFIX);
  const hint = hintFor(secret);
  const result = await db.run(
    "INSERT INTO host_keys (name, digest, hint, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
    [name, digestSecret(secret), hint, now, expiresAt],
  );
  return { id: result.lastInsertRowid, secret, hint, expiresAt };
}

/** Soft-deletes a host key; false when there is no such (undeleted) key. */
export async function deleteHostKey(
  db: Queryable,
  id: number,
  now: number,
): Promise<HostKey | undefined> {
  const row = await db.get<HostKeyRow>(
    "SELECT * FROM host_keys WHERE id = ? AND deleted_at IS NULL",
    [id],
  );
  if (!row) return undefined;
  await db.run("UPDATE host_keys SET deleted_at = ? WHERE id = ?", [now, id]);
  return toHostKey(row);
}

/**
 * The usable host keys, by digest, in memory. The store registry reloads them whenever
 * platform.db changes (the CLI commits), so a new or deleted key applies within a second.
 */
export class HostKeyCache {
  private byDigest = new Map<string, HostKey>();

  constructor(private readonly db: Queryable) {}

  async load(): Promise<void> {
    this.byDigest = new Map((await listHostKeys(this.db)).map((k) => [k.digest, k]));
  }

  /** The active host key a presented secret is, if any (looked up by digest only). */
  find(secret: string, now: number): HostKey | undefined {
    if (!HOST_KEY_PATTERN.test(secret)) return undefined;
    const key = this.byDigest.get(digestSecret(secret));
    return key && isActive(key, now) ? key : undefined;
  }
}
