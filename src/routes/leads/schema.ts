import * as v from "valibot";
import { formatIsrael } from "../../format/time";
import {
  bool,
  cursorParam,
  dateTimeOut,
  dateTimeParam,
  idOut,
  limitParam,
  nullableText,
} from "../../http/schemas";

/** A lead as stored. */
export interface LeadRow {
  id: number;
  name: string;
  email: string | null;
  phone: string | null;
  message: string | null;
  source: string | null;
  handled: number;
  notes: string | null;
  created_at: number;
}

export const LEAD_COLUMNS = "id, name, email, phone, message, source, handled, notes, created_at";

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

export const toLead = (row: LeadRow): Lead => ({
  id: row.id,
  name: row.name,
  email: row.email,
  phone: row.phone,
  message: row.message,
  source: row.source,
  handled: row.handled === 1,
  notes: row.notes,
  createdAt: formatIsrael(row.created_at),
});
