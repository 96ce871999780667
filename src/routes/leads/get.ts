import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { defineRoute } from "../define";
import { getLead, toLead } from "./row";
import { leadOut } from "./schema";

export const getLeadRoute = defineRoute({
  method: "GET",
  path: "/leads/:id",
  area: "leads",
  summary: "Get one lead.",
  params: idParams,
  response: leadOut,
  async handler(c, { params }) {
    return ok(c, toLead(await getLead(c.get("db"), params.id)));
  },
});
