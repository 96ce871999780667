import { fixedError } from "../../errors";
import { defineRoute } from "../define";
import {
  emailOwner,
  emailTaken,
  findCustomer,
  INSERT_CUSTOMER,
  insertArgs,
  toCustomer,
} from "./row";
import { createBody, customerOut } from "./schema";

const registrationDisabled = () => fixedError("registration_disabled");

export const createCustomer = defineRoute({
  method: "POST",
  path: "/customers",
  area: "customers",
  summary: "Register a customer (pending while the store approves customers manually)",
  body: createBody,
  response: customerOut,
  errors: ["email_taken", "registration_disabled"],
  async create(c, { body }, tx) {
    const store = c.get("store");
    if (!store.settings.registration) throw registrationDisabled();
    if ((await emailOwner(tx, body.email)) !== undefined) throw emailTaken();
    const now = c.get("deps").now();
    const { lastInsertRowid } = await tx.run(
      INSERT_CUSTOMER,
      insertArgs({
        email: body.email,
        first_name: body.firstName ?? "",
        last_name: body.lastName ?? "",
        phone: body.phone ?? null,
        newsletter: Number(body.newsletter ?? false),
        status: store.settings.manualCustomerApproval ? "pending" : "active",
        notes: body.notes ?? null,
        registered_at: now,
        last_visit_at: null,
        created_at: now,
      }),
    );
    const row = await findCustomer(tx, lastInsertRowid);
    if (!row) throw new Error("the customer just inserted is missing");
    return { status: 201, data: toCustomer(row) };
  },
});
