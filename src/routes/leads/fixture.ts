import * as v from "valibot";
import type { Queryable } from "../../db/driver";
import type { FixtureSection } from "../../fixtures/section";
import { parseDateTime } from "../../format/time";
import { bool, email, nullableText, text } from "../../http/schemas";
import { LEAD_COLUMNS, type LeadRow, SOURCE_MAX } from "./schema";

const dateTime = () =>
  v.pipe(
    v.string("must be a date-time string."),
    v.check((s) => parseDateTime(s) !== null, "must be an ISO 8601 date-time with an offset, or a date."),
    v.transform((s) => parseDateTime(s) as number),
  );

/** A fixture lead: the API's field names and formats; `id` and `createdAt` optional. */
const recordSchema = v.pipe(
  v.strictObject({
    id: v.optional(v.pipe(v.number("must be a positive integer."), v.safeInteger("must be a positive integer."), v.minValue(1, "must be a positive integer."))),
    name: text(100),
    email: v.optional(v.nullable(email()), null),
    phone: v.optional(nullableText(32), null),
    message: v.optional(nullableText(5000), null),
    source: v.optional(nullableText(SOURCE_MAX), null),
    handled: v.optional(bool(), false),
    notes: v.optional(nullableText(5000), null),
    createdAt: v.optional(dateTime()),
  }),
  v.transform((r) => ({
    id: r.id ?? null,
    name: r.name,
    email: r.email,
    phone: r.phone,
    message: r.message,
    source: r.source,
    handled: Number(r.handled),
    notes: r.notes,
    // Filled in by `check` (which knows the load's "now") when the record has none.
    created_at: r.createdAt ?? null,
  })),
);

type FixtureLead = Omit<LeadRow, "id" | "created_at"> & { id: number | null; created_at: number | null };

const INSERT = `INSERT INTO leads (${LEAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

async function insertLeads(tx: Queryable, rows: FixtureLead[]): Promise<void> {
  // Records with an id go first, so an assigned id can never take one a later record names.
  const ordered = [...rows.filter((r) => r.id !== null), ...rows.filter((r) => r.id === null)];
  for (const r of ordered) {
    await tx.run(INSERT, [r.id, r.name, r.email, r.phone, r.message, r.source, r.handled, r.notes, r.created_at]);
  }
}

export const leadFixture: FixtureSection<FixtureLead> = {
  name: "leads",
  schema: recordSchema,
  check(row, context, seen) {
    row.created_at ??= context.now;
    if (row.id !== null) {
      if (seen.has(`id:${row.id}`)) return ["id", `lead id ${row.id} appears twice.`];
      seen.set(`id:${row.id}`, true);
    }
    return null;
  },
  insert: insertLeads,
};
