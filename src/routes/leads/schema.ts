import * as v from "valibot";
import {
  bool,
  cursorParam,
  dateTimeOut,
  dateTimeParam,
  idOut,
  limitParam,
  nullableText,
} from "../../http/schemas";

/** Longest `source` (the storefront form that made the lead, e.g. "contact-page"). */
export const SOURCE_MAX = 100;

export const listQuery = v.strictObject({
  limit: limitParam(),
  cursor: cursorParam(),
  created_since: dateTimeParam(),
});

export const updateBody = v.strictObject({
  handled: v.optional(bool()),
  notes: v.optional(nullableText(5000)),
});

export const leadOut = v.pipe(
  v.object({
    id: idOut(),
    name: v.string(),
    email: v.nullable(v.string()),
    phone: v.nullable(v.string()),
    message: v.nullable(v.string()),
    source: v.nullable(v.string()),
    handled: v.boolean(),
    notes: v.nullable(v.string()),
    createdAt: dateTimeOut(),
  }),
  v.title("Lead"),
);

export type Lead = v.InferOutput<typeof leadOut>;
