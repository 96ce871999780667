import type { Queryable } from "../../db/driver";
import { notFound } from "../../errors";
import { formatIsrael, formatIsraelOrNull } from "../../format/time";
import type { PayType } from "./schema";

/**
 * An `orders` row and its mapping to the API's Order. The nested parts (items,
 * promotions, fields, coupon, invoice) are stored as JSON text in the API's own shape,
 * except that money is integer minor units; they are turned into API values in place.
 */
export interface OrderRow {
  id: number;
  number: number;
  status_id: number;
  status_name: string | null;
  paid: number;
  total: number;
  vat: number | null;
  pay_type: string;
  payments: number | null;
  paypal_fee: number | null;
  tracking_number: string | null;
  admin_notes: string | null;
  customer_notes: string;
  newsletter: number;
  customer_id: number | null;
  customer_name: string;
  customer_email: string;
  customer_phone: string;
  customer_address: string;
  delivery_name: string;
  delivery_price: number;
  coupon: string | null;
  fields: string;
  invoice: string | null;
  items: string;
  promotions: string;
  created_at: number;
  updated_at: number | null;
}

/** Every column of an order but the nested parts with no bound on their count, with its status name (a primary-key lookup per row). */
const BOUNDED_COLUMNS =
  "id, number, status_id, (SELECT name FROM order_statuses WHERE order_statuses.id = orders.status_id) AS status_name, " +
  "paid, total, vat, pay_type, payments, paypal_fee, tracking_number, admin_notes, customer_notes, newsletter, " +
  "customer_id, customer_name, customer_email, customer_phone, customer_address, delivery_name, delivery_price, " +
  "coupon, invoice, created_at, updated_at";
const UNBOUNDED = ["fields", "items", "promotions"] as const;

/** Every column of an order. */
export const ORDER_COLUMNS = `${BOUNDED_COLUMNS}, ${UNBOUNDED.join(", ")}`;

/** The bytes of an order's items, fields and promotions as stored (read without reading them). */
const UNBOUNDED_BYTES = UNBOUNDED.map((column) => `octet_length(${column})`).join(" + ");

/**
 * An order whose items, fields and promotions pass this many bytes is listed without them
 * (`ORDER_LIST_COLUMNS`) and they are read for it alone, if its page keeps it: a page of
 * 101 such orders read whole took over a second.
 */
const LISTED_WHOLE_BYTES = 64 * 1024;

/** An order row as a list reads it: `fields`, `items` and `promotions` are null when they take more than `LISTED_WHOLE_BYTES`. */
export type ListedOrderRow = OrderRow & { unbounded_bytes: number };

export const ORDER_LIST_COLUMNS = [
  BOUNDED_COLUMNS,
  `${UNBOUNDED_BYTES} AS unbounded_bytes`,
  ...UNBOUNDED.map(
    (column) =>
      `CASE WHEN ${UNBOUNDED_BYTES} <= ${LISTED_WHOLE_BYTES} THEN ${column} END AS ${column}`,
  ),
].join(", ");

/** An order's size in a list's page: its items, fields and promotions, its notes, ~1 KB besides. */
export const listedBytes = (row: ListedOrderRow) =>
  row.unbounded_bytes + (row.admin_notes?.length ?? 0) + row.customer_notes.length + 1024;

/** Reads the parts a list left out of its large orders. */
export async function readLeftOut(db: Queryable, rows: ListedOrderRow[]): Promise<void> {
  for (const row of rows) {
    if (row.unbounded_bytes <= LISTED_WHOLE_BYTES) continue;
    const parts = await db.get<Pick<OrderRow, (typeof UNBOUNDED)[number]>>(
      `SELECT ${UNBOUNDED.join(", ")} FROM orders WHERE id = ?`,
      [row.id],
    );
    // Orders are never deleted one by one; the store's delete closes its database first.
    if (!parts) throw new Error(`order ${row.id} vanished while its page was read`);
    Object.assign(row, parts);
  }
}

/** Nested parts as stored: the API's shapes with money in minor units. */
export interface StoredOption {
  name: string;
  price: number;
}

export interface StoredItem {
  name: string;
  sku: string;
  productId: number;
  quantity: number;
  price: number;
  optionsPrice: number;
  unitPrice: number;
  total: number;
  unitName: string | null;
  vatFree: boolean;
  options: StoredOption[];
}

export interface StoredPromotion {
  name: string;
  amount: number;
  productId: number | null;
}

export interface StoredCoupon {
  code: string;
  description: string;
  amount: number;
}

export interface StoredField {
  name: string;
  value: string;
}

export interface StoredInvoice {
  number: number;
  url: string;
}

type Nested = [
  StoredItem[],
  StoredPromotion[],
  StoredField[],
  StoredCoupon | null,
  StoredInvoice | null,
];

/** Parses the five nested columns with one JSON.parse and converts their money to API numbers in place. */
function nestedParts(row: OrderRow): Nested {
  const nested = JSON.parse(
    `[${row.items},${row.promotions},${row.fields},${row.coupon ?? "null"},${row.invoice ?? "null"}]`,
  ) as Nested;
  for (const item of nested[0]) {
    item.price /= 100;
    item.optionsPrice /= 100;
    item.unitPrice /= 100;
    item.total /= 100;
    for (const option of item.options) option.price /= 100;
  }
  for (const promotion of nested[1]) promotion.amount /= 100;
  if (nested[3]) nested[3].amount /= 100;
  return nested;
}

/** The API's Order for a row (the hot path of every order read: one parse, no copies). */
export function toOrder(row: OrderRow) {
  const [items, promotions, fields, coupon, invoice] = nestedParts(row);
  return {
    id: row.id,
    number: row.number,
    status: { id: row.status_id, name: row.status_name ?? "" },
    paid: row.paid === 1,
    total: row.total / 100,
    vat: row.vat === null ? null : row.vat / 100,
    payType: row.pay_type as PayType,
    payments: row.payments,
    paypalFee: row.paypal_fee === null ? null : row.paypal_fee / 100,
    trackingNumber: row.tracking_number,
    adminNotes: row.admin_notes,
    customerNotes: row.customer_notes,
    newsletter: row.newsletter === 1,
    createdAt: formatIsrael(row.created_at),
    updatedAt: formatIsraelOrNull(row.updated_at),
    customer: {
      id: row.customer_id,
      name: row.customer_name,
      email: row.customer_email,
      phone: row.customer_phone,
      address: row.customer_address,
    },
    delivery: { name: row.delivery_name, price: row.delivery_price / 100 },
    coupon,
    fields,
    invoice,
    items,
    promotions,
  };
}

export type Order = ReturnType<typeof toOrder>;

/** One order row of this store, or 404 `not_found`. */
export async function getOrder(db: Queryable, id: number): Promise<OrderRow> {
  const row = await db.get<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = ?`, [id]);
  if (!row) throw notFound(`Order ${id}`);
  return row;
}
