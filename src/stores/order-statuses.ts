import type { Queryable } from "../db/driver";

export interface OrderStatus {
  id: number;
  name: string;
}

export const readOrderStatuses = (db: Queryable) =>
  db.all<OrderStatus>("SELECT id, name FROM order_statuses ORDER BY id");

/** Adds `statuses` to a store's (call inside a transaction). */
export async function insertOrderStatuses(tx: Queryable, statuses: OrderStatus[]): Promise<void> {
  for (const status of statuses)
    await tx.run("INSERT INTO order_statuses (id, name) VALUES (?, ?)", [status.id, status.name]);
}
