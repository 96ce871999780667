import type { Db, Queryable } from "../db/driver";
import type { Store } from "../db/platform";
import { echo } from "../errors";
import { storable } from "../format/text";
import { formatIsrael, israelYearsLater } from "../format/time";
import { isBlank, nameText } from "../http/schemas";
import { queueMail } from "../mail/outbox";
import { keyCreated, keyDeleted } from "../mail/templates";
import {
  AREAS,
  describePermissions,
  isAccess,
  NO_PERMISSIONS,
  normalizePermissions,
  type Permissions,
} from "./permissions";
import { digestSecret, generateSecret, hintFor, KEY_PATTERN } from "./secret";

export const MAX_ACTIVE_KEYS = 5;
export const MAX_NAME_LENGTH = 100;

/** A key's name, checked alike everywhere it is given (a host key's too). */
export const keyNameSchema = nameText(MAX_NAME_LENGTH);
const DAY = 86_400_000;
/** A key's expiry choices (api-contract.md: none, 30 days, 90 days, 1 year). */
export const EXPIRY_CHOICES = ["never", "30d", "90d", "1y"] as const;
export type ExpiryChoice = (typeof EXPIRY_CHOICES)[number];

export const isExpiryChoice = (value: string): value is ExpiryChoice =>
  (EXPIRY_CHOICES as readonly string[]).includes(value);

/**
 * When a key made at `now` expires: days are whole 24-hour days; a year ends on the same
 * Israel date and time a year on (a key made on 1 March 2027 expires on 1 March 2028, not
 * on 29 February).
 */
export function expiryAt(choice: ExpiryChoice, now: number): number | null {
  if (choice === "never") return null;
  if (choice === "1y") return israelYearsLater(now, 1);
  return now + (choice === "30d" ? 30 : 90) * DAY;
}

export interface ApiKey {
  id: number;
  name: string;
  digest: string;
  hint: string;
  permissions: Permissions;
  createdAt: number;
  expiresAt: number | null;
  deletedAt: number | null;
  lastUsedAt: number | null;
  /** The key that replaced this one when it was rolled (0 while the roll runs). */
  replacedBy: number | null;
}

interface KeyRow {
  id: number;
  name: string;
  digest: string;
  hint: string;
  permissions: string;
  created_at: number;
  expires_at: number | null;
  deleted_at: number | null;
  last_used_at: number | null;
  /** The key that replaced this one when it was rolled (0 while the roll runs). */
  replaced_by: number | null;
}

const toKey = (row: KeyRow): ApiKey => ({
  id: row.id,
  name: row.name,
  digest: row.digest,
  hint: row.hint,
  permissions: normalizePermissions(JSON.parse(row.permissions)),
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  deletedAt: row.deleted_at,
  lastUsedAt: row.last_used_at,
  replacedBy: row.replaced_by,
});

/** Not deleted and not expired: the rule for store keys and host keys alike. */
export const isActive = (key: Pick<ApiKey, "deletedAt" | "expiresAt">, now: number) =>
  key.deletedAt === null && (key.expiresAt === null || key.expiresAt > now);

/** The sixth active key: `plan_limit` (the CLI exits 1 with this message). */
export class KeyLimitError extends Error {
  readonly code = "plan_limit";

  constructor() {
    super(`A store can have at most ${MAX_ACTIVE_KEYS} active API keys; delete one first.`);
  }
}

export class KeyNotFoundError extends Error {}

/** Rolling a key that is deleted or expired (`key_inactive`). */
export class KeyInactiveError extends Error {}

export async function listKeys(db: Queryable): Promise<ApiKey[]> {
  return (await db.all<KeyRow>("SELECT * FROM api_keys ORDER BY id")).map(toKey);
}

/** Keys a server may accept: not deleted (expiry is checked per request). */
export async function loadUsableKeys(db: Queryable): Promise<ApiKey[]> {
  return (await db.all<KeyRow>("SELECT * FROM api_keys WHERE deleted_at IS NULL")).map(toKey);
}

export interface NewKey {
  name: string;
  permissions: Permissions;
  expiresAt: number | null;
  /** Fixtures may pin a secret; otherwise one is generated. */
  secret?: string;
  deleted?: boolean;
  createdAt?: number;
}

/** A key request that breaks a rule: which field (`name`, an area, `expires`, `permissions`) and what is wrong. */
export class KeyInputError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field} ${problem}`);
  }
}

/** A key as a person asks for it (CLI flags, the admin screen's form): text, not yet checked. */
export interface KeyRequest {
  name: string;
  permissions: Partial<Record<string, string | undefined>>;
  expires?: string;
}

/**
 * The one place a key request is checked and turned into a `NewKey`: name of 1..100
 * characters, each area none/read/write (missing is none), expiry one of EXPIRY_CHOICES.
 * `requireAccess` refuses a key that grants nothing (the admin screen and management API).
 */
export function prepareKey(
  request: KeyRequest,
  now: number,
  options: { requireAccess?: boolean } = {},
): NewKey {
  if (request.name === "") throw new KeyInputError("name", "is required");
  if ([...request.name].length > MAX_NAME_LENGTH)
    throw new KeyInputError("name", `must be at most ${MAX_NAME_LENGTH} characters`);
  if (!storable(request.name))
    throw new KeyInputError("name", "must be valid Unicode text without NUL characters");
  if (isBlank(request.name)) throw new KeyInputError("name", "is required");
  const permissions: Permissions = { ...NO_PERMISSIONS };
  for (const area of AREAS) {
    const value = request.permissions[area] ?? "none";
    if (!isAccess(value))
      throw new KeyInputError(area, `takes none, read or write, not "${echo(value)}"`);
    permissions[area] = value;
  }
  if (options.requireAccess && AREAS.every((area) => permissions[area] === "none")) {
    throw new KeyInputError("permissions", "must give read or write access to at least one area");
  }
  const expires = request.expires ?? "never";
  if (!isExpiryChoice(expires))
    throw new KeyInputError("expires", `takes never, 30d, 90d or 1y, not "${echo(expires)}"`);
  return { name: request.name, permissions, expiresAt: expiryAt(expires, now) };
}

/**
 * The keys that count toward the five: active ones, a rolled key in its grace counting as
 * one with its replacement. It is left out while that replacement is active (or being made:
 * `replacedBy` 0). Once the replacement is deleted or expired, the keys still in their grace
 * that it replaced (a key rolled twice leaves two) count as one between them.
 */
export function countActiveKeys(keys: readonly ApiKey[], now: number): number {
  const active = keys.filter((k) => isActive(k, now));
  const activeIds = new Set(active.map((k) => k.id));
  const families = new Set<number>();
  for (const key of active) {
    if (key.replacedBy === null) families.add(key.id);
    else if (key.replacedBy !== 0 && !activeIds.has(key.replacedBy)) families.add(key.replacedBy);
  }
  return families.size;
}

/** Inserts a key inside the caller's transaction; returns it with the secret (shown once). */
export async function insertKey(tx: Queryable, input: NewKey, now = Date.now()) {
  const secret = input.secret ?? generateSecret();
  if (!KEY_PATTERN.test(secret))
    throw new Error("a key secret must be svc_sk_ followed by 32+ letters or digits");
  const active = !input.deleted && (input.expiresAt === null || input.expiresAt > now);
  if (active && countActiveKeys(await listKeys(tx), now) >= MAX_ACTIVE_KEYS)
    throw new KeyLimitError();
  const hint = hintFor(secret);
  const createdAt = input.createdAt ?? now;
  const result = await tx.run(
    `INSERT INTO api_keys (name, digest, hint, permissions, created_at, expires_at, deleted_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [
      input.name,
      digestSecret(secret),
      hint,
      JSON.stringify(input.permissions),
      createdAt,
      input.expiresAt,
      input.deleted ? now : null,
    ],
  );
  return {
    id: result.lastInsertRowid,
    secret,
    hint,
    permissions: input.permissions,
    expiresAt: input.expiresAt,
  };
}

const notice = (
  store: Store,
  key: { name: string; hint: string; permissions: Permissions },
  by: string,
  at: number,
) => ({
  storeName: store.name,
  keyName: key.name,
  hint: key.hint,
  permissions: describePermissions(key.permissions),
  by,
  at: formatIsrael(at),
});

/** Creates a key and queues the owner's notice in the same transaction. */
export function createKey(db: Db, store: Store, input: NewKey, by: string, now = Date.now()) {
  return db.transaction((tx) => createKeyIn(tx, store, input, by, now));
}

/** `createKey` inside the caller's transaction. */
export async function createKeyIn(
  tx: Queryable,
  store: Store,
  input: NewKey,
  by: string,
  now = Date.now(),
) {
  const created = await insertKey(tx, input, now);
  await queueMail(
    tx,
    {
      ...keyCreated(notice(store, { ...created, name: input.name }, by, now)),
      to: store.ownerEmail,
    },
    now,
  );
  return created;
}

/** Soft-deletes a key (so its id stays unique) and queues the owner's notice. */
export async function deleteKey(
  db: Db,
  store: Store,
  id: number,
  by: string,
  now = Date.now(),
): Promise<ApiKey> {
  return db.transaction(async (tx) => {
    const row = await tx.get<KeyRow>("SELECT * FROM api_keys WHERE id = ? AND deleted_at IS NULL", [
      id,
    ]);
    if (!row) throw new KeyNotFoundError(`No API key with id ${id} in store ${store.slug}.`);
    await tx.run("UPDATE api_keys SET deleted_at = ? WHERE id = ?", [now, id]);
    const key = toKey(row);
    await queueMail(tx, { ...keyDeleted(notice(store, key, by, now)), to: store.ownerEmail }, now);
    return key;
  });
}

/**
 * Replaces a key: a new one with the same name and permissions (its secret shown once),
 * while the old one keeps working until `now + graceMs`. Queues the owner's notice.
 */
export async function rollKey(
  db: Db,
  store: Store,
  id: number,
  graceMs: number,
  expiresAt: number | null,
  by: string,
  now = Date.now(),
) {
  return db.transaction(async (tx) => {
    const row = await tx.get<KeyRow>("SELECT * FROM api_keys WHERE id = ?", [id]);
    if (!row) throw new KeyNotFoundError(`No API key with id ${id} in store ${store.slug}.`);
    const old = toKey(row);
    if (!isActive(old, now))
      throw new KeyInactiveError(
        `Key ${id} is deleted or expired; only an active key can be rolled.`,
      );
    // Rolled twice, a key would leave its first replacement counted as a key of its own.
    if (row.replaced_by !== null) {
      const replacement = await tx.get<KeyRow>("SELECT * FROM api_keys WHERE id = ?", [
        row.replaced_by,
      ]);
      const next =
        replacement && isActive(toKey(replacement), now)
          ? `roll key ${row.replaced_by} instead`
          : `its replacement, key ${row.replaced_by}, is deleted or expired: create a new key`;
      throw new KeyInactiveError(
        `Key ${id} was already rolled and works only until its grace ends; ${next}.`,
      );
    }
    const oldExpiresAt =
      old.expiresAt === null ? now + graceMs : Math.min(old.expiresAt, now + graceMs);
    // Marked replaced first (with any key it replaced, still in its grace), so the limit
    // counts the family once (a fifth key can be rolled); all point at the new key after.
    await tx.run("UPDATE api_keys SET expires_at = ? WHERE id = ?", [oldExpiresAt, id]);
    await tx.run("UPDATE api_keys SET replaced_by = 0 WHERE id = ? OR replaced_by = ?", [id, id]);
    const created = await insertKey(
      tx,
      { name: old.name, permissions: old.permissions, expiresAt },
      now,
    );
    await tx.run("UPDATE api_keys SET replaced_by = ? WHERE replaced_by = 0", [created.id]);
    await queueMail(
      tx,
      {
        ...keyCreated({
          ...notice(store, { ...created, name: old.name }, by, now),
          replaces: { hint: old.hint, until: formatIsrael(oldExpiresAt) },
        }),
        to: store.ownerEmail,
      },
      now,
    );
    return {
      created: { ...created, name: old.name, createdAt: now },
      old: { ...old, expiresAt: oldExpiresAt },
    };
  });
}
