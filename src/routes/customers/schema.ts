import * as v from "valibot";
import {
  bool,
  cursorParam,
  dateTimeOut,
  dateTimeParam,
  email,
  idOut,
  limitParam,
  nullableDateTimeOut,
  nullableText,
  text,
} from "../../http/schemas";
import { CUSTOMER_STATUSES } from "./row";

export const status = () => v.picklist(CUSTOMER_STATUSES, "must be active, pending or locked.");

/** CustomerInput fields shared by create and update (api-contract.md §7). */
const details = {
  firstName: v.optional(text(100)),
  lastName: v.optional(text(100)),
  phone: v.optional(nullableText(32)),
  newsletter: v.optional(bool()),
  notes: v.optional(nullableText(5000)),
};

/** POST /customers: `email` required; `active` is not accepted (unknown field). */
export const createBody = v.strictObject({ email: email(), ...details });

/** PATCH /customers/{id}: only the sent fields change; `active` approves, unlocks or locks. */
export const updateBody = v.strictObject({
  email: v.optional(email()),
  ...details,
  active: v.optional(bool()),
});

export const listQuery = v.strictObject({
  limit: limitParam(),
  cursor: cursorParam(),
  created_since: dateTimeParam(),
  status: v.optional(status()),
  email: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, "must not be empty."),
      v.maxLength(254, "must be at most 254 characters long."),
      v.metadata({ description: "Exact email address, compared without regard to case." }),
    ),
  ),
});

/** A customer in an answer. */
export const customerOut = v.object({
  id: idOut(),
  email: v.string(),
  firstName: v.string(),
  lastName: v.string(),
  phone: v.nullable(v.string()),
  newsletter: v.boolean(),
  status: status(),
  notes: v.nullable(v.string()),
  registeredAt: nullableDateTimeOut(),
  lastVisitAt: nullableDateTimeOut(),
  createdAt: dateTimeOut(),
});
