import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { nothingToUpdate } from "../../http/validate";
import { defineRoute } from "../define";
import { getLead } from "./queries";
import { leadOut, toLead, updateBody } from "./schema";

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
    if (body.handled === undefined && body.notes === undefined) throw nothingToUpdate();
    const lead = await c.var.db.transaction(async (tx) => {
      const current = await getLead(tx, params.id);
      const next = {
        ...current,
        handled: body.handled === undefined ? current.handled : Number(body.handled),
        notes: body.notes === undefined ? current.notes : body.notes,
      };
      if (next.handled !== current.handled || next.notes !== current.notes) {
        await tx.run("UPDATE leads SET handled = ?, notes = ? WHERE id = ?", [next.handled, next.notes, current.id]);
      }
      return next;
    });
    return ok(c, toLead(lead));
  },
});
