import type { Queryable } from "../../db/driver";
import { notFound } from "../../errors";
import { LEAD_COLUMNS, type LeadRow } from "./schema";

/** One lead row of this store, or 404 `not_found`. */
export async function getLead(db: Queryable, id: number): Promise<LeadRow> {
  const row = await db.get<LeadRow>(`SELECT ${LEAD_COLUMNS} FROM leads WHERE id = ?`, [id]);
  if (!row) throw notFound(`Lead ${id}`);
  return row;
}
