import type { Queryable } from "../../db/driver";
import { fixedError, notFound } from "../../errors";
import { formatIsrael, formatIsraelOrNull } from "../../format/time";

export const CUSTOMER_STATUSES = ["active", "pending", "locked"] as const;
export type CustomerStatus = (typeof CUSTOMER_STATUSES)[number];

/** A row of the `customers` table. */
export interface CustomerRow {
  id: number;
  email: string;
  email_lower: string;
  first_name: string;
  last_name: string;
  phone: string | null;
  newsletter: number;
  status: CustomerStatus;
  notes: string | null;
  registered_at: number | null;
  last_visit_at: number | null;
  created_at: number;
}

/** A customer as the API shows it (api-contract.md §7). */
export interface Customer {
  id: number;
  email: string;
  firstName: string;
  lastName: string;
  phone: string | null;
  newsletter: boolean;
  status: CustomerStatus;
  notes: string | null;
  registeredAt: string | null;
  lastVisitAt: string | null;
  createdAt: string;
}

export const CUSTOMER_COLUMNS =
  "id, email, email_lower, first_name, last_name, phone, newsletter, status, notes, registered_at, last_visit_at, created_at";

/**
 * The key emails are unique by and filtered on: the address with A–Z in lower case. Only
 * those: addresses are ASCII, and `toLowerCase` would let a filter's Kelvin sign (U+212A)
 * find an address with a `k`.
 */
export const emailKey = (email: string) => email.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());

export function toCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    phone: row.phone,
    newsletter: row.newsletter === 1,
    status: row.status,
    notes: row.notes,
    registeredAt: formatIsraelOrNull(row.registered_at),
    lastVisitAt: formatIsraelOrNull(row.last_visit_at),
    createdAt: formatIsrael(row.created_at),
  };
}

/** A new row's values, in the order of CUSTOMER_COLUMNS. */
export type NewCustomer = Omit<CustomerRow, "id" | "email_lower"> & { id?: number };

export const INSERT_CUSTOMER = `INSERT INTO customers (${CUSTOMER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

export function insertArgs(c: NewCustomer) {
  return [
    c.id ?? null,
    c.email,
    emailKey(c.email),
    c.first_name,
    c.last_name,
    c.phone,
    c.newsletter,
    c.status,
    c.notes,
    c.registered_at,
    c.last_visit_at,
    c.created_at,
  ];
}

export function findCustomer(db: Queryable, id: number): Promise<CustomerRow | undefined> {
  return db.get<CustomerRow>(`SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE id = ?`, [id]);
}

/** One customer row of this store, or 404 `not_found`. */
export async function getCustomer(db: Queryable, id: number): Promise<CustomerRow> {
  const row = await findCustomer(db, id);
  if (!row) throw notFound(`Customer ${id}`);
  return row;
}

/** The id of the customer using this email (any case), if one does. */
export async function emailOwner(db: Queryable, email: string): Promise<number | undefined> {
  const row = await db.get<{ id: number }>("SELECT id FROM customers WHERE email_lower = ?", [
    emailKey(email),
  ]);
  return row?.id;
}

export const emailTaken = () => fixedError("email_taken", { field: "email" });
