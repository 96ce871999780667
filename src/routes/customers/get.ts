import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { defineRoute } from "../define";
import { customerNotFound, findCustomer, toCustomer } from "./mapping";
import { customerOut } from "./schema";

export const getCustomer = defineRoute({
  method: "GET",
  path: "/customers/:id",
  area: "customers",
  summary: "Get one customer",
  params: idParams,
  response: customerOut,
  async handler(c, { params }) {
    const row = await findCustomer(c.var.db, params.id);
    if (!row) throw customerNotFound(params.id);
    return ok(c, toCustomer(row));
  },
});
