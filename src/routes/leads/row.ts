import type { Queryable } from "../../db/driver";
import { notFound } from "../../errors";
import { formatIsrael } from "../../format/time";
import type { Lead } from "./schema";

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

/** One lead row of this store, or 404 `not_found`. */
export async function getLead(db: Queryable, id: number): Promise<LeadRow> {
  const row = await db.get<LeadRow>(`SELECT ${LEAD_COLUMNS} FROM leads WHERE id = ?`, [id]);
  if (!row) throw notFound(`Lead ${id}`);
  return row;
}
