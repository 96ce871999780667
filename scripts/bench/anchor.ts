/**
 * The floors the real server is measured against, on the same database file:
 *
 *   bun scripts/bench/anchor.ts static PORT       raw Bun.serve answering a static JSON body
 *   bun scripts/bench/anchor.ts hono PORT DB_PATH bare Hono handlers through the `libsql`
 *                                                 binding with prepared statements
 *
 * The Hono routes use the real API's paths and bodies, so one load script drives both.
 * No auth, no validation, no envelope rules beyond `{ok, data}`: the least work that
 * answers the same question from the same rows.
 */
import { Hono } from "hono";
import Database from "libsql";

const [mode, portArg, dbPath] = process.argv.slice(2);
const port = Number(portArg);
const JSON_HEADERS = { "Content-Type": "application/json; charset=utf-8" };

function serveStatic(): void {
  const body = JSON.stringify({ ok: true, data: { status: "ok" } });
  Bun.serve({
    hostname: "127.0.0.1",
    port,
    fetch: () => new Response(body, { headers: JSON_HEADERS }),
  });
}

type Row = Record<string, unknown>;

function serveHono(path: string): void {
  const db = new Database(path);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA busy_timeout = 5000");
  const orderById = db.prepare("SELECT * FROM orders WHERE id = ?");
  const ordersPage = db.prepare("SELECT * FROM orders ORDER BY created_at DESC, id DESC LIMIT ?");
  const productsPage = db.prepare(
    "SELECT * FROM products ORDER BY updated_at DESC, id DESC LIMIT ?",
  );
  const updateOrder = db.prepare("UPDATE orders SET status_id = ?, updated_at = ? WHERE id = ?");
  const insertCustomer = db.prepare(
    `INSERT INTO customers (email, email_lower, first_name, last_name, status, created_at)
     VALUES (?, ?, ?, ?, 'active', ?) RETURNING *`,
  );
  const updateStock = db.prepare("UPDATE products SET stock = ?, updated_at = ? WHERE id = ?");
  const applyBatch = db.transaction((items: Array<{ id: number; stock: number }>, now: number) => {
    let updated = 0;
    for (const item of items) updated += Number(updateStock.run(item.stock, now, item.id).changes);
    return updated;
  });

  const app = new Hono();
  const page = (rows: Row[], limit: number) => ({
    ok: true,
    data: rows.slice(0, limit),
    hasMore: rows.length > limit,
  });
  app.get("/api/v1/orders/:id", (c) => {
    const row = orderById.get(Number(c.req.param("id"))) as Row | undefined;
    return row ? c.json({ ok: true, data: row }) : c.json({ ok: false }, 404);
  });
  app.get("/api/v1/orders", (c) => {
    const limit = Number(c.req.query("limit") ?? 50);
    return c.json(page(ordersPage.all(limit + 1) as Row[], limit));
  });
  app.get("/api/v1/products", (c) => {
    const limit = Number(c.req.query("limit") ?? 50);
    return c.json(page(productsPage.all(limit + 1) as Row[], limit));
  });
  app.patch("/api/v1/orders/:id", async (c) => {
    const body = (await c.req.json()) as { status: number };
    const id = Number(c.req.param("id"));
    updateOrder.run(body.status, Date.now(), id);
    return c.json({ ok: true, data: orderById.get(id) as Row });
  });
  app.post("/api/v1/customers", async (c) => {
    const body = (await c.req.json()) as { email: string; firstName: string; lastName: string };
    const row = insertCustomer.get(
      body.email,
      body.email.toLowerCase(),
      body.firstName,
      body.lastName,
      Date.now(),
    );
    return c.json({ ok: true, data: row }, 201);
  });
  app.post("/api/v1/products/batch", async (c) => {
    const body = (await c.req.json()) as { items: Array<{ id: number; stock: number }> };
    const updated = applyBatch(body.items, Date.now());
    return c.json({ ok: true, data: { updated, failed: body.items.length - updated } });
  });
  Bun.serve({ hostname: "127.0.0.1", port, fetch: app.fetch });
}

if (mode === "static") serveStatic();
else if (mode === "hono" && dbPath) serveHono(dbPath);
else {
  console.error("usage: anchor.ts static PORT | anchor.ts hono PORT DB_PATH");
  process.exit(2);
}
