import * as v from "valibot";
import type { Queryable } from "../../db/driver";
import { bool, email, filledText, nullableText } from "../../http/schemas";
import { type FixtureSection, fixtureDateTime, fixtureId, repeatedId } from "../../load/section";
import { LEAD_COLUMNS, type LeadRow } from "./row";
import { SOURCE_MAX } from "./schema";

/** A fixture lead: the API's field names and formats; `id` and `createdAt` optional. */
export const leadRecord = v.strictObject({
  id: v.optional(fixtureId()),
  name: filledText(100),
  email: v.optional(v.nullable(email()), null),
  phone: v.optional(nullableText(32), null),
  message: v.optional(nullableText(5000), null),
  source: v.optional(nullableText(SOURCE_MAX), null),
  handled: v.optional(bool(), false),
  notes: v.optional(nullableText(5000), null),
  createdAt: v.optional(fixtureDateTime()),
});

/** A validated lead record as the row to insert. */
export const toLeadRow = (
  r: Omit<v.InferOutput<typeof leadRecord>, "id"> & { id?: number },
): FixtureLead => ({
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
});

const recordSchema = v.pipe(leadRecord, v.transform(toLeadRow));

export type FixtureLead = Omit<LeadRow, "id" | "created_at"> & {
  id: number | null;
  created_at: number | null;
};

const INSERT = `INSERT INTO leads (${LEAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

async function insertLeads(tx: Queryable, rows: FixtureLead[]): Promise<void> {
  for (const r of rows) {
    await tx.run(INSERT, [
      r.id,
      r.name,
      r.email,
      r.phone,
      r.message,
      r.source,
      r.handled,
      r.notes,
      r.created_at,
    ]);
  }
}

export const leadFixture: FixtureSection<FixtureLead> = {
  name: "leads",
  schema: recordSchema,
  check(row, context, seen) {
    row.created_at ??= context.now;
    return repeatedId(seen, "lead", row.id);
  },
  insert: insertLeads,
};
