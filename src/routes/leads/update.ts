import type * as v from "valibot";
import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { nothingToUpdate } from "../../http/validate";
import { type Columns, changedColumns, sendsAnyOf } from "../changes";
import { defineRoute } from "../define";
import { getLead, type LeadRow, toLead } from "./row";
import { leadOut, updateBody } from "./schema";

/** The fields a PATCH may change, and their columns. */
const COLUMN_OF: Columns<v.InferOutput<typeof updateBody>, LeadRow> = {
  handled: "handled",
  notes: "notes",
};

export const updateLead = defineRoute({
  method: "PATCH",
  path: "/leads/:id",
  area: "leads",
  summary: "Mark a lead handled or not, and set its notes (null clears them).",
  params: idParams,
  body: updateBody,
  response: leadOut,
  errors: ["nothing_to_update"],
  async handler(c, { params, body }) {
    if (!sendsAnyOf(body, COLUMN_OF)) throw nothingToUpdate();
    const lead = await c.get("db").transaction(async (tx) => {
      const current = await getLead(tx, params.id);
      const changed = changedColumns(current, body, COLUMN_OF);
      const next = { ...current, ...changed };
      if (Object.keys(changed).length > 0) {
        await tx.run("UPDATE leads SET handled = ?, notes = ? WHERE id = ?", [
          next.handled,
          next.notes,
          current.id,
        ]);
      }
      return next;
    });
    return ok(c, toLead(lead));
  },
});
