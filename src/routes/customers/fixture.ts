import * as v from "valibot";
import type { Queryable } from "../../db/driver";
import type { FixtureSection } from "../../fixtures/section";
import { parseDateTime } from "../../format/time";
import { email, nullableText, text } from "../../http/schemas";
import { CUSTOMER_STATUSES, emailKey, INSERT_CUSTOMER, insertArgs } from "./mapping";

/**
 * Customers in a fixture (operations.md): the API's field names and formats. Records
 * may carry states the API would not create (a `pending` customer in a store without
 * manual approval, a `lastVisitAt`).
 */

const dateTime = () =>
  v.pipe(
    v.string("must be a date-time string."),
    v.check((s) => parseDateTime(s) !== null, "must be an ISO 8601 date-time with an offset, or a date."),
    v.transform((s) => parseDateTime(s) as number),
  );

const customerRecord = v.strictObject({
  id: v.optional(v.pipe(v.number("must be a positive whole number."), v.safeInteger("must be a positive whole number."), v.minValue(1, "must be a positive whole number."))),
  email: email(),
  firstName: v.optional(text(100), ""),
  lastName: v.optional(text(100), ""),
  phone: v.optional(nullableText(32), null),
  newsletter: v.optional(v.boolean("must be true or false."), false),
  status: v.optional(v.picklist(CUSTOMER_STATUSES, "must be active, pending or locked."), "active"),
  notes: v.optional(nullableText(5000), null),
  /** Missing: when the record was created (as for API creates); `null` is kept. */
  registeredAt: v.optional(v.nullable(dateTime())),
  lastVisitAt: v.optional(v.nullable(dateTime()), null),
  createdAt: v.optional(dateTime()),
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
    if (customer.id !== undefined) {
      if (seen.has(`id:${customer.id}`)) return ["id", `customer id ${customer.id} appears twice.`];
      seen.set(`id:${customer.id}`, true);
    }
    const key = `email:${emailKey(customer.email)}`;
    if (seen.has(key)) return ["email", `email "${customer.email}" is also used by customers[${seen.get(key)}] (emails are unique regardless of case).`];
    seen.set(key, index);
    customer.createdAt ??= context.now; // "now when missing" means the load's time
    return null;
  },
  /**
   * Customers with an id go in first, so ids assigned to the others (max + 1) cannot
   * collide with an id named later in the file. One statement text: the driver
   * prepares it once and reuses it for every row.
   */
  async insert(tx: Queryable, customers: CustomerRecord[]) {
    for (const customer of customers) if (customer.id !== undefined) await tx.run(INSERT_CUSTOMER, argsOf(customer));
    for (const customer of customers) if (customer.id === undefined) await tx.run(INSERT_CUSTOMER, argsOf(customer));
  },
};
