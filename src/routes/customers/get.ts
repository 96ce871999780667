import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { defineRoute } from "../define";
import { getCustomer, toCustomer } from "./row";
import { customerOut } from "./schema";

export const getCustomerRoute = defineRoute({
  method: "GET",
  path: "/customers/:id",
  area: "customers",
  summary: "Get one customer",
  params: idParams,
  response: customerOut,
  async handler(c, { params }) {
    return ok(c, toCustomer(await getCustomer(c.get("db"), params.id)));
  },
});
