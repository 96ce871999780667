import * as v from "valibot";
import type { Queryable } from "../../db/driver";
import { bool, email, nullableText, text } from "../../http/schemas";
import { type FixtureSection, fixtureDateTime, fixtureId, repeatedId } from "../../load/section";
import { emailKey, INSERT_CUSTOMER, insertArgs } from "./row";
import { status } from "./schema";

/**
 * Customers in a fixture (operations.md): the API's field names and formats. Records
 * may carry states the API would not create (a `pending` customer in a store without
 * manual approval, a `lastVisitAt`).
 */

const customerRecord = v.strictObject({
  id: v.optional(fixtureId()),
  email: email(),
  firstName: v.optional(text(100), ""),
  lastName: v.optional(text(100), ""),
  phone: v.optional(nullableText(32), null),
  newsletter: v.optional(bool(), false),
  status: v.optional(status(), "active"),
  notes: v.optional(nullableText(5000), null),
  /** Missing: when the record was created (as for API creates); `null` is kept. */
  registeredAt: v.optional(v.nullable(fixtureDateTime())),
  lastVisitAt: v.optional(v.nullable(fixtureDateTime()), null),
  createdAt: v.optional(fixtureDateTime()),
});

type CustomerRecord = v.InferOutput<typeof customerRecord>;

function argsOf(record: CustomerRecord) {
  const createdAt = record.createdAt ?? 0; // set by check() before insert
  return insertArgs({
    id: record.id,
    email: record.email,
    first_name: record.firstName,
    last_name: record.lastName,
    phone: record.phone,
    newsletter: Number(record.newsletter),
    status: record.status,
    notes: record.notes,
    registered_at: record.registeredAt === undefined ? createdAt : record.registeredAt,
    last_visit_at: record.lastVisitAt,
    created_at: createdAt,
  });
}

export const customerFixture: FixtureSection<CustomerRecord> = {
  name: "customers",
  schema: customerRecord,
  check(customer, context, seen) {
    const index = (seen.get("#") as number | undefined) ?? 0; // records are checked in file order
    seen.set("#", index + 1);
    const repeated = repeatedId(seen, "customer", customer.id);
    if (repeated) return repeated;
    const key = `email:${emailKey(customer.email)}`;
    if (seen.has(key))
      return [
        "email",
        `email "${customer.email}" is also used by customers[${seen.get(key)}] (emails are unique regardless of case).`,
      ];
    seen.set(key, index);
    customer.createdAt ??= context.now; // "now when missing" means the load's time
    return null;
  },
  /** One statement text: the driver prepares it once and reuses it for every row. */
  async insert(tx: Queryable, customers: CustomerRecord[]) {
    for (const customer of customers) await tx.run(INSERT_CUSTOMER, argsOf(customer));
  },
};
