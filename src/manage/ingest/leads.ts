import * as v from "valibot";
import { leadFixture, leadRecord, toLeadRow } from "../../routes/leads/fixture";
import { getLead, toLead } from "../../routes/leads/row";
import { leadOut } from "../../routes/leads/schema";
import { defineManageRoute } from "../define";
import { slugParams } from "../stores/schema";

/** A lead from a storefront form: the fixture's record without `id`. */
const formLead = v.pipe(v.omit(leadRecord, ["id"]), v.transform(toLeadRow));

export const createLead = defineManageRoute({
  method: "POST",
  path: "/stores/:slug/leads",
  summary: "Record a lead from a storefront form (`name` required, no id).",
  params: slugParams,
  body: formLead,
  response: leadOut,
  status: 201,
  async createInStore(c, { body }, tx) {
    leadFixture.check?.(body, { statusIds: new Set(), now: c.get("deps").now() }, new Map());
    await leadFixture.insert(tx, [body]);
    const row = await tx.get<{ id: number }>("SELECT max(id) AS id FROM leads");
    return { status: 201, data: toLead(await getLead(tx, row?.id ?? 0)) };
  },
});
