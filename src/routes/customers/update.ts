import type * as v from "valibot";
import type { Queryable } from "../../db/driver";
import type { AppContext } from "../../http/context";
import { ok } from "../../http/respond";
import { idParams } from "../../http/schemas";
import { nothingToUpdate } from "../../http/validate";
import { queueMail } from "../../mail/outbox";
import { customerApproved } from "../../mail/templates";
import { type Columns, changedColumns, sendsAnyOf } from "../changes";
import { defineRoute } from "../define";
import {
  type CustomerRow,
  type CustomerStatus,
  emailKey,
  emailOwner,
  emailTaken,
  getCustomer,
  toCustomer,
} from "./row";
import { customerOut, updateBody } from "./schema";

type CustomerUpdate = v.InferOutput<typeof updateBody>;

/**
 * The status after `active` (api-contract.md §7): `true` approves a pending customer and
 * unlocks a locked one, `false` locks from any state; equal to the present state, nothing.
 */
const statusAfter = (current: CustomerStatus, active: boolean | undefined): CustomerStatus =>
  active === undefined ? current : active ? "active" : "locked";

/** The fields a PATCH sets as sent, and their columns (`active` sets `status`: statusAfter). */
const COLUMN_OF: Columns<CustomerUpdate, CustomerRow> = {
  email: "email",
  firstName: "first_name",
  lastName: "last_name",
  phone: "phone",
  newsletter: "newsletter",
  notes: "notes",
};

function applyUpdate(row: CustomerRow, update: CustomerUpdate): CustomerRow {
  return {
    ...row,
    ...changedColumns(row, update, COLUMN_OF),
    email_lower: update.email === undefined ? row.email_lower : emailKey(update.email),
    status: statusAfter(row.status, update.active),
  };
}

const UPDATE_SQL = `UPDATE customers SET email = ?, email_lower = ?, first_name = ?, last_name = ?, phone = ?,
  newsletter = ?, notes = ?, status = ? WHERE id = ?`;

const saveRow = (tx: Queryable, r: CustomerRow) =>
  tx.run(UPDATE_SQL, [
    r.email,
    r.email_lower,
    r.first_name,
    r.last_name,
    r.phone,
    r.newsletter,
    r.notes,
    r.status,
    r.id,
  ]);

/** Updates the row and, on approval, queues the "you can log in" email in the same transaction. */
async function updateInTransaction(
  c: AppContext,
  tx: Queryable,
  id: number,
  update: CustomerUpdate,
) {
  const row = await getCustomer(tx, id);
  if (update.email !== undefined) {
    const owner = await emailOwner(tx, update.email);
    if (owner !== undefined && owner !== row.id) throw emailTaken();
  }
  const updated = applyUpdate(row, update);
  await saveRow(tx, updated);
  const approved = row.status === "pending" && updated.status === "active";
  if (approved) {
    await c.get("deps").beforeMailQueued(c.get("store").slug);
    const mail = customerApproved({
      storeName: c.get("store").name,
      firstName: updated.first_name,
    });
    await queueMail(tx, { ...mail, to: updated.email }, c.get("deps").now());
  }
  return { customer: toCustomer(updated), approved };
}

export const updateCustomer = defineRoute({
  method: "PATCH",
  path: "/customers/:id",
  area: "customers",
  summary: "Update a customer; `active` approves, unlocks or locks it",
  params: idParams,
  body: updateBody,
  response: customerOut,
  errors: ["nothing_to_update", "email_taken"],
  async handler(c, { params, body }) {
    if (!sendsAnyOf(body, { ...COLUMN_OF, active: "status" })) throw nothingToUpdate();
    const result = await c
      .get("db")
      .transaction((tx) => updateInTransaction(c, tx, params.id, body));
    if (result.approved) c.get("deps").onMailQueued(c.get("store").slug);
    return ok(c, result.customer);
  },
});
