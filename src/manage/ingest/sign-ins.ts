import * as v from "valibot";
import { ApiError } from "../../errors";
import { optionalJsonBody } from "../../http/json-body";
import { ok } from "../../http/respond";
import { fixtureDateTime } from "../../load/section";
import { getCustomer, toCustomer } from "../../routes/customers/row";
import { customerOut } from "../../routes/customers/schema";
import { storeOr404 } from "../context";
import { defineManageRoute } from "../define";
import { slugIdParams } from "../stores/schema";

export const recordSignIn = defineManageRoute({
  method: "POST",
  path: "/stores/:slug/customers/:id/sign-ins",
  summary: "The customer signed in to the storefront: sets lastVisitAt to now or to `at`.",
  params: slugIdParams,
  body: v.strictObject({ at: v.optional(fixtureDateTime()) }),
  readBody: optionalJsonBody,
  response: customerOut,
  bodyOptional: true,
  errors: ["customer_locked"],
  handler: async (c, { params, body }) => {
    const store = storeOr404(c, params.slug);
    const { pool, now } = c.get("deps");
    const customer = await pool.use(store.slug, (db) =>
      db.transaction(async (tx) => {
        const row = await getCustomer(tx, params.id);
        if (row.status === "locked")
          throw new ApiError(
            "customer_locked",
            `Customer ${params.id} is locked; a locked customer cannot sign in.`,
          );
        await tx.run("UPDATE customers SET last_visit_at = ? WHERE id = ?", [
          body.at ?? now(),
          params.id,
        ]);
        return getCustomer(tx, params.id);
      }),
    );
    return ok(c, toCustomer(customer));
  },
});
