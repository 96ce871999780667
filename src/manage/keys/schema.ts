import * as v from "valibot";
import { formatIsrael, formatIsraelOrNull } from "../../format/time";
import { dateTimeOut, nullableDateTimeOut, positiveInteger } from "../../http/schemas";
import { ACCESS_LEVELS, AREAS, type Area, normalizePermissions } from "../../keys/permissions";
import { type ApiKey, EXPIRY_CHOICES, isActive, keyNameSchema } from "../../keys/repository";

const EXPIRY_NAMES = [...EXPIRY_CHOICES];
export const expiresSchema = v.optional(
  v.picklist(EXPIRY_NAMES, `must be one of ${EXPIRY_NAMES.join(", ")}.`),
  "never",
);

const access = v.picklist(ACCESS_LEVELS, "must be none, read or write.");

export const permissionsSchema = v.pipe(
  v.strictObject(
    Object.fromEntries(AREAS.map((area) => [area, v.optional(access)])) as Record<
      Area,
      v.OptionalSchema<typeof access, undefined>
    >,
  ),
  v.transform((given) => normalizePermissions(given)),
  v.check(
    (p) => AREAS.some((area) => p[area] !== "none"),
    "must grant read or write on at least one area.",
  ),
);

export const createKeyBody = v.strictObject({
  name: keyNameSchema,
  permissions: permissionsSchema,
  expires: expiresSchema,
});

export const GRACE_MS = {
  now: 0,
  "1h": 3_600_000,
  "24h": 86_400_000,
  "7d": 7 * 86_400_000,
} as const;
const GRACE_NAMES = Object.keys(GRACE_MS) as Array<keyof typeof GRACE_MS>;

export const rollKeyBody = v.strictObject({
  grace: v.picklist(GRACE_NAMES, `must be one of ${GRACE_NAMES.join(", ")}.`),
  expires: expiresSchema,
});

const permissionsOut = v.object(
  Object.fromEntries(AREAS.map((area) => [area, v.picklist(["none", "read", "write"])])),
);

export const keyOut = v.object({
  id: positiveInteger(),
  name: v.string(),
  hint: v.string(),
  permissions: permissionsOut,
  createdAt: dateTimeOut(),
  expiresAt: nullableDateTimeOut(),
  lastUsedAt: nullableDateTimeOut(),
  status: v.picklist(["active", "expired", "deleted"]),
});

/** A rolled key: the full secret, shown this once. */
export const rolledKeyOut = v.object({
  ...keyOut.entries,
  key: v.pipe(v.string(), v.description("The full key, shown this once.")),
});

/** A created key: as rolled, but a replayed answer (Idempotent-Replayed) has `key: null` (the secret is never stored). */
export const createdKeyOut = v.object({
  ...keyOut.entries,
  key: v.pipe(
    v.nullable(v.string()),
    v.description("The full key, shown this once; null in a replayed answer."),
  ),
});

export const keyStatus = (key: ApiKey, now: number): "active" | "expired" | "deleted" =>
  key.deletedAt !== null ? "deleted" : isActive(key, now) ? "active" : "expired";

export const toKeyJson = (key: ApiKey, now: number) => ({
  id: key.id,
  name: key.name,
  hint: key.hint,
  permissions: key.permissions,
  createdAt: formatIsrael(key.createdAt),
  expiresAt: formatIsraelOrNull(key.expiresAt),
  lastUsedAt: formatIsraelOrNull(key.lastUsedAt),
  status: keyStatus(key, now),
});
