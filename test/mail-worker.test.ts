import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../scripts/bench/processes";
import { databaseClosed, StoreArriving } from "../src/db/driver";
import { Platform } from "../src/db/platform";
import { StorePool } from "../src/db/pool";
import { createKey } from "../src/keys/repository";
import { loadFixture } from "../src/load/load";
import { Logger, type LogLevel } from "../src/log";
import type { RetryPolicy } from "../src/mail/backoff";
import { listMail, type Mail, type OutboxRow, queueMail } from "../src/mail/outbox";
import { customerApproved, orderStatusChanged } from "../src/mail/templates";
import { MailWorker, type MailWorkerOptions } from "../src/mail/worker";
import { StoreRegistry } from "../src/registry";
import { otherStore, tempDir, testStore } from "./helpers";
import { eventually, parseAddress, parseMessage, type SmtpPeer, startSmtp } from "./mail-support";
import { runCli } from "./process";
import { testLocation } from "./sqld";

const HEBREW_STORE = "חנות הדגמה";
const FAST: Partial<RetryPolicy> = {
  baseDelayMs: 10,
  maxDelayMs: 40,
  maxAttempts: 3,
  maxAgeMs: 3_600_000,
  claimMs: 5_000,
};

class CaptureLogger extends Logger {
  lines: Array<Record<string, unknown>> = [];
  override write(level: LogLevel, entry: Record<string, unknown>): void {
    this.lines.push({ level, ...entry });
  }
  override always(msg: string, fields: Record<string, unknown> = {}): void {
    this.write("info", { time: new Date().toISOString(), msg, ...fields });
  }
}

interface Harness {
  dataDir: string;
  pool: StorePool;
  registry: StoreRegistry;
  logger: CaptureLogger;
  worker: MailWorker;
  queue(slug: string, mail: Mail): Promise<number>;
  rows(slug?: string): Promise<OutboxRow[]>;
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A data dir with two stores (shop1 has a Hebrew name) and a worker on it, not yet started. */
async function harness(options: Partial<MailWorkerOptions> = {}): Promise<Harness> {
  const dataDir = tempDir("storeapi-mail-");
  const location = await testLocation(dataDir);
  await loadFixture(location, { stores: [testStore({ name: HEBREW_STORE }), otherStore()] });
  const platform = await Platform.open(location);
  const registry = new StoreRegistry(platform, "localhost");
  await registry.load();
  const pool = new StorePool(location);
  const logger = new CaptureLogger("debug");
  const worker = new MailWorker({
    pool,
    registry,
    logger,
    smtp: null,
    mailDir: null,
    mailFrom: "no-reply@localhost",
    retry: FAST,
    tickMs: 10,
    ...options,
  });
  const h: Harness = {
    dataDir,
    pool,
    registry,
    logger,
    worker,
    queue: (slug, mail) => pool.use(slug, (db) => db.transaction((tx) => queueMail(tx, mail))),
    rows: (slug = "shop1") => pool.use(slug, listMail),
    close: async () => {
      await worker.stop(1000, 1000);
      await pool.close();
      await platform.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  cleanups.push(h.close);
  return h;
}

async function smtp(options: Parameters<typeof startSmtp>[0] = {}): Promise<SmtpPeer> {
  const peer = await startSmtp(options);
  cleanups.push(() => peer.close());
  return peer;
}

const approved = (firstName: string): Mail => ({
  ...customerApproved({ storeName: HEBREW_STORE, firstName }),
  to: "dana@example.com",
});

const statusMail = (trackingNumber: string | null): Mail => ({
  ...orderStatusChanged({
    storeName: HEBREW_STORE,
    customerName: "Dana Levi",
    orderNumber: 1001,
    statusName: "Shipped",
    trackingNumber,
  }),
  to: "dana@example.com",
});

const allSent = async (h: Harness, slug = "shop1") => {
  const rows = await h.rows(slug);
  return rows.length > 0 && rows.every((r) => r.status === "sent") ? rows : undefined;
};

/** Another worker on the same stores, sending to a fresh SMTP peer (a later server, or another node). */
async function secondWorker(h: Harness, options: Partial<MailWorkerOptions> = {}) {
  const peer = await smtp();
  const registry = new StoreRegistry(
    await Platform.open(await testLocation(h.dataDir)),
    "localhost",
  );
  await registry.load();
  const worker = new MailWorker({
    pool: h.pool,
    registry,
    logger: h.logger,
    smtp: peer.url,
    mailDir: null,
    mailFrom: "no-reply@localhost",
    retry: FAST,
    tickMs: 10,
    ...options,
  });
  cleanups.push(() => worker.stop(1000, 1000));
  return { peer, worker };
}

describe("mail worker over SMTP", () => {
  test("delivers each kind of email with its content", async () => {
    const peer = await smtp();
    const h = await harness({ smtp: peer.url });
    const store = { slug: "shop1", name: HEBREW_STORE, ownerEmail: "owner@shop1.test" };
    const key = await h.pool.use("shop1", (db) =>
      createKey(
        db,
        {
          ...store,
          domain: "shop1.test",
          plan: "growth",
          settings: { manualCustomerApproval: false, notifyStatusChange: true, registration: true },
          keysVersion: 0,
          mailVersion: 0,
          createdAt: 0,
        },
        {
          name: "מפתח הזמנות",
          permissions: { products: "none", orders: "write", customers: "read", leads: "none" },
          expiresAt: null,
        },
        "dana (command line)",
      ),
    );
    await h.queue("shop1", approved("דנה"));
    await h.queue("shop1", statusMail("RR123456789IL"));
    await h.queue("shop1", statusMail(null));
    h.worker.start();
    h.worker.notify("shop1");
    const messages = await peer.waitFor(4);
    const rows = await eventually(() => allSent(h));

    expect(rows.map((r) => [r.kind, r.status, r.attempts, r.last_error])).toEqual([
      ["key_created", "sent", 1, null],
      ["customer_approved", "sent", 1, null],
      ["order_status", "sent", 1, null],
      ["order_status", "sent", 1, null],
    ]);
    expect(rows.every((r) => typeof r.sent_at === "number")).toBe(true);
    const byId = new Map(messages.map((m) => [m.headers["message-id"], m]));
    const messageOf = (row: OutboxRow) => {
      const message = byId.get(`<shop1.${row.id}.${row.created_at}@localhost>`);
      if (!message) throw new Error(`no message for row ${row.id}`);
      return message;
    };
    for (const message of messages) {
      expect(message.envelopeFrom).toBe("no-reply@localhost");
      expect(parseAddress(message.headers.from)).toEqual({
        name: HEBREW_STORE,
        address: "no-reply@localhost",
      });
      expect(message.headers["auto-submitted"]).toBe("auto-generated");
      expect(message.headers["content-type"]).toStartWith("multipart/alternative");
    }

    const keyMail = messageOf(rows[0]);
    expect(keyMail.envelopeTo).toEqual(["owner@shop1.test"]);
    expect(keyMail.headers.to).toBe("owner@shop1.test");
    expect(keyMail.headers.subject).toBe(`API key "מפתח הזמנות" created for ${HEBREW_STORE}`);
    expect(keyMail.headers["reply-to"]).toBeUndefined();
    expect(keyMail.text).toContain("Name: מפתח הזמנות\n");
    expect(keyMail.text).toContain(`Key: ${key.hint}\n`);
    expect(keyMail.text).toContain("Permissions: orders:write, customers:read\n");
    expect(keyMail.text).toContain("Created by: dana (command line)\n");
    expect(keyMail.text).toMatch(/Created at: \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[23]:00/);
    expect(keyMail.text).not.toContain(key.secret);
    expect(keyMail.html).toContain(key.hint);
    expect(keyMail.html).toContain("מפתח הזמנות");

    const welcome = messageOf(rows[1]);
    expect(welcome.envelopeTo).toEqual(["dana@example.com"]);
    expect(welcome.headers.subject).toBe(`Your ${HEBREW_STORE} account is approved`);
    expect(welcome.headers["reply-to"]).toBe("owner@shop1.test");
    expect(welcome.text).toStartWith("Hello דנה,\n\n");
    expect(welcome.text).toContain("You can now log in.");
    expect(welcome.html).toContain('<p dir="auto">Hello דנה,</p>');

    const shipped = messageOf(rows[2]);
    expect(shipped.headers.subject).toBe("Order #1001: Shipped");
    expect(shipped.headers["reply-to"]).toBe("owner@shop1.test");
    expect(shipped.text).toContain("is now: Shipped.");
    expect(shipped.text).toContain(
      "Order: #1001\nStatus: Shipped\nTracking number: RR123456789IL\n",
    );
    expect(shipped.html).toContain("RR123456789IL");

    const untracked = messageOf(rows[3]);
    expect(untracked.text).toContain("Order: #1001\nStatus: Shipped\n");
    expect(untracked.text).not.toContain("Tracking");
    expect(untracked.html).not.toContain("Tracking");
  });

  test("mail queued before the worker started is found by its start scan, in every store", async () => {
    const peer = await smtp();
    const h = await harness({ smtp: peer.url });
    await h.queue("shop1", approved("Dana"));
    await h.queue("shop2", statusMail("T-1"));
    h.worker.start();
    const messages = await peer.waitFor(2);
    expect(messages.map((m) => m.headers.subject).sort()).toEqual([
      "Order #1001: Shipped",
      `Your ${HEBREW_STORE} account is approved`,
    ]);
    await eventually(() => allSent(h, "shop1"));
    await eventually(() => allSent(h, "shop2"));
  });

  test("after the start scan, a store's outbox is read only when the store is notified", async () => {
    const peer = await smtp();
    const h = await harness({ smtp: peer.url });
    h.worker.start();
    await Bun.sleep(100); // let the start scan finish: nothing is queued anywhere
    await h.queue("shop2", statusMail(null)); // written behind the worker's back: no notify
    await Bun.sleep(200);
    expect(peer.messages.length).toBe(0);
    expect((await h.rows("shop2")).map((r) => r.status)).toEqual(["queued"]);
    h.worker.notify("shop2");
    await peer.waitFor(1);
    await eventually(() => allSent(h, "shop2"));
  });

  test("the sender is the store's name at --mail-from's address, unless --mail-from names itself", async () => {
    const peer = await smtp();
    const sent: Array<[string, { name: string; address: string }]> = [];
    for (const mailFrom of [
      "robot@mail.test",
      "<robot@mail.test>",
      "Shop Robot <robot@mail.test>",
    ]) {
      const h = await harness({ smtp: peer.url, mailFrom });
      await h.queue("shop1", approved("Dana"));
      h.worker.start();
      const messages = await peer.waitFor(sent.length + 1);
      await eventually(() => allSent(h));
      await h.worker.stop();
      sent.push([mailFrom, parseAddress(messages.at(-1)?.headers.from ?? "")]);
    }
    expect(sent).toEqual([
      ["robot@mail.test", { name: HEBREW_STORE, address: "robot@mail.test" }],
      // A bare bracketed address has no name of its own (it lost the store's name).
      ["<robot@mail.test>", { name: HEBREW_STORE, address: "robot@mail.test" }],
      ["Shop Robot <robot@mail.test>", { name: "Shop Robot", address: "robot@mail.test" }],
    ]);
  });

  test("an SMTP login is made with the URL's percent-decoded user and password", async () => {
    const peer = await smtp({ auth: { user: "mailer", pass: "p@ss:w/rd" } });
    const h = await harness({ smtp: `smtp://mailer:p%40ss%3Aw%2Frd@127.0.0.1:${peer.port}` });
    await h.queue("shop1", approved("Dana"));
    h.worker.start();
    await peer.waitFor(1);
    await eventually(() => allSent(h));
  });

  test("a wrong password keeps mail queued (not failed) with the reason", async () => {
    const peer = await smtp({ auth: { user: "mailer", pass: "right" } });
    const h = await harness({ smtp: `smtp://mailer:wrong@127.0.0.1:${peer.port}` });
    await h.queue("shop1", approved("Dana"));
    h.worker.start();
    const row = await eventually(async () => {
      const [r] = await h.rows();
      return r.attempts >= 4 ? r : undefined; // past maxAttempts (3): a login failure is not the message's fault
    });
    expect(row.status).toBe("queued");
    expect(row.last_error).toContain("535");
    expect(peer.messages.length).toBe(0);
  });

  test("an SMTP outage delays mail and loses none", async () => {
    const port = freePort();
    const h = await harness({ smtp: `smtp://127.0.0.1:${port}` });
    await h.queue("shop1", approved("Dana"));
    await h.queue("shop1", statusMail("A1"));
    await h.queue("shop2", statusMail("B2"));
    h.worker.start();
    const failing = await eventually(async () => {
      const rows = await h.rows();
      return rows.some((r) => r.attempts >= 2) ? rows : undefined;
    });
    expect(failing.every((r) => r.status === "queued")).toBe(true);
    expect(failing.find((r) => r.attempts >= 2)?.last_error).toContain("ECONNREFUSED");

    const peer = await smtp({ port });
    const messages = await peer.waitFor(3);
    const shop1 = await eventually(() => allSent(h, "shop1"));
    const shop2 = await eventually(() => allSent(h, "shop2"));
    expect([...shop1, ...shop2].map((r) => [r.status, r.last_error])).toEqual([
      ["sent", null],
      ["sent", null],
      ["sent", null],
    ]);
    expect(new Set(messages.map((m) => m.headers["message-id"])).size).toBe(3);
    expect(messages.length).toBe(3);
  });

  test("a message the server rejects every time is failed after the attempt cap, and listed", async () => {
    const peer = await smtp({ rejectWith: { code: 550, message: "5.1.1 mailbox unavailable" } });
    const h = await harness({ smtp: peer.url });
    await h.queue("shop1", approved("Dana"));
    await h.queue("shop1", statusMail(null));
    h.worker.start();
    const rows = await eventually(async () => {
      const all = await h.rows();
      return all.every((r) => r.status === "failed") ? all : undefined;
    });
    for (const row of rows) {
      expect(row.attempts).toBe(3);
      expect(row.last_error).toContain("550");
      expect(row.sent_at).toBeNull();
    }
    expect(peer.rejections).toBe(6);
    expect(peer.messages.length).toBe(0);
    // Each line follows its row's commit, which the rows above may show first.
    const failedLines = () => h.logger.lines.filter((l) => l.msg === "mail failed for good");
    expect(
      (await eventually(() => (failedLines().length >= 2 ? failedLines() : undefined))).length,
    ).toBe(2);

    const listed = await runCli([
      "mail",
      "list",
      "--store",
      "shop1",
      "--json",
      "--data",
      h.dataDir,
    ]);
    expect(listed.code).toBe(0);
    expect(
      listed.json.map((e: Record<string, unknown>) => [
        e.id,
        e.store,
        e.kind,
        e.to,
        e.status,
        e.attempts,
        e.sentAt,
      ]),
    ).toEqual([
      [1, "shop1", "customer_approved", "dana@example.com", "failed", 3, null],
      [2, "shop1", "order_status", "dana@example.com", "failed", 3, null],
    ]);
    expect(listed.json[0].lastError).toContain("550 5.1.1 mailbox unavailable");
    expect(listed.json[0].subject).toBe(`Your ${HEBREW_STORE} account is approved`);
    expect(listed.json[0].createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0[23]:00$/);
  });

  test("stop() finishes the message in hand before it returns", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const peer = await smtp();
    const h = await harness({
      smtp: peer.url,
      transport: {
        name: "smtp",
        send: async () => {
          release();
          await Bun.sleep(150); // slow relay: the stop arrives mid-delivery
        },
        close: async () => {},
      },
    });
    await h.queue("shop1", approved("Dana"));
    h.worker.start();
    await held;
    await h.worker.stop(5000);
    expect((await h.rows()).map((r) => r.status)).toEqual(["sent"]);
  });

  test("stop() delivers what is due within the grace period", async () => {
    const peer = await smtp();
    const h = await harness({ smtp: peer.url, tickMs: 60_000 });
    await h.queue("shop1", approved("Dana"));
    await h.queue("shop2", statusMail(null));
    h.worker.notify("shop1");
    h.worker.notify("shop2");
    await h.worker.stop(5000);
    expect(peer.messages.length).toBe(2);
    expect((await h.rows("shop1")).map((r) => r.status)).toEqual(["sent"]);
    expect((await h.rows("shop2")).map((r) => r.status)).toEqual(["sent"]);
  });

  test("a message in a relay's hands past the grace is waited for: marked sent, never sent again", async () => {
    let sends = 0;
    const h = await harness({
      transport: {
        name: "smtp",
        send: async () => {
          sends++;
          await Bun.sleep(400); // the relay answers after the grace
        },
        close: async () => {},
      },
    });
    await h.queue("shop1", approved("Dana"));
    h.worker.start();
    await eventually(() => (sends === 1 ? true : undefined));
    await h.worker.stop(50);
    expect((await h.rows()).map((r) => [r.status, r.attempts])).toEqual([["sent", 1]]);
    expect(sends).toBe(1);
  });

  test("a message sent whose `sent` cannot be written (a full disk) is recorded later, never sent again", async () => {
    let sends = 0;
    const h = await harness({
      retry: { ...FAST, claimMs: 50 },
      transport: { name: "smtp", send: async () => void sends++, close: async () => {} },
    });
    // Refuses exactly the write that records a message sent, as a disk filling up would.
    const refuseSent = `CREATE TRIGGER refuse_sent BEFORE UPDATE ON outbox WHEN NEW.status = 'sent'
      BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`;
    await h.pool.use("shop1", (db) => db.run(refuseSent));
    await h.queue("shop1", approved("Dana"));
    h.worker.start();
    await eventually(() =>
      h.logger.lines.some((l) => l.msg === "mail: cannot process a store's outbox")
        ? true
        : undefined,
    );
    // Turns of the worker at the outbox past the claim (50 ms): the old worker sent it again there.
    const claimOver = Date.now() + 100;
    let turnsAfter = 0;
    const use = h.pool.use.bind(h.pool);
    h.pool.use = ((slug, work) => {
      if (slug === "shop1" && Date.now() > claimOver) turnsAfter++;
      return use(slug, work);
    }) as typeof h.pool.use;
    await eventually(() => (turnsAfter >= 4 ? true : undefined));
    await use("shop1", (db) => db.run("DROP TRIGGER refuse_sent"));
    const [row] = await eventually(() => allSent(h));
    expect([sends, row.attempts]).toEqual([1, 1]);
    expect(h.logger.lines.filter((l) => l.msg === "mail sent earlier, now recorded")).toHaveLength(
      1,
    );
  });

  test("a message whose delivery outlives the grace and the wait for it stays queued and is sent by the next worker", async () => {
    const h = await harness({
      retry: { ...FAST, claimMs: 50 },
      transport: { name: "smtp", send: () => new Promise(() => {}), close: async () => {} }, // never answers
    });
    await h.queue("shop1", approved("Dana"));
    h.worker.start();
    await eventually(async () => ((await h.rows())[0].attempts === 1 ? true : undefined));
    await h.worker.stop(50, 50);
    expect((await h.rows()).map((r) => [r.status, r.attempts])).toEqual([["queued", 1]]);

    const { peer, worker: next } = await secondWorker(h);
    next.start();
    await peer.waitFor(1);
    const [row] = await eventually(() => allSent(h));
    expect(row.attempts).toBe(2);
  });
});

describe("mail workers of several nodes (a shared libSQL server)", () => {
  /** Node "a" takes the message in hand for good, with a claim of `claimMs`. */
  async function claimedByA(claimMs: number) {
    const h = await harness({
      node: "a",
      retry: { ...FAST, claimMs },
      transport: { name: "smtp", send: () => new Promise(() => {}), close: async () => {} }, // in hand for good
    });
    await h.queue("shop1", approved("Dana"));
    h.worker.start();
    await eventually(async () => ((await h.rows())[0].attempts === 1 ? true : undefined));
    return h;
  }

  test("node b's start leaves node a's fresh claim alone; the claim's expiry frees it", async () => {
    const h = await claimedByA(1500);
    const { peer, worker } = await secondWorker(h, { node: "b" });
    await worker.start();
    worker.notify("shop1");
    await Bun.sleep(200);
    expect(peer.messages).toHaveLength(0);
    const [row] = await eventually(() => allSent(h));
    expect(row.attempts).toBe(2);
  });

  test("node a restarted releases its own claims at once", async () => {
    const h = await claimedByA(60_000);
    const { peer, worker } = await secondWorker(h, { node: "a" });
    worker.start();
    await peer.waitFor(1);
    const [row] = await eventually(() => allSent(h));
    expect(row.attempts).toBe(2);
  });
});

describe("mail worker, a store deleted meanwhile", () => {
  test("a store deleted between the registry's answer and its outbox's read is dropped quietly, not logged as damage", async () => {
    const h = await harness();
    await h.queue("shop1", approved("Dana"));
    const registered = h.registry.get.bind(h.registry);
    let deleted = false;
    h.registry.get = (slug: string) => (deleted && slug === "shop1" ? undefined : registered(slug));
    const read = Promise.withResolvers<void>();
    const use = h.pool.use.bind(h.pool);
    h.pool.use = ((slug: string, work: never) => {
      if (slug !== "shop1") return use(slug, work);
      // What the management API's delete does meanwhile: unregister, archive the file.
      deleted = true;
      read.resolve();
      throw new Error(
        'stores/shop1.db is missing: store "shop1" is registered but has no database',
      );
    }) as typeof h.pool.use;
    h.worker.start();
    h.worker.notify("shop1");
    await read.promise;
    await Bun.sleep(100);
    expect(h.logger.lines.filter((line) => line.level === "error")).toEqual([]);
  });
});

describe("mail worker, a store deleted and made anew meanwhile", () => {
  test("the old store's failure is not logged against the new one, whose mail goes at once", async () => {
    const h = await harness({ retry: { ...FAST, baseDelayMs: 60_000 } });
    await h.queue("shop1", approved("Dana"));
    const registered = h.registry.get.bind(h.registry);
    let madeAnew = false;
    h.registry.get = (slug: string) => {
      const store = registered(slug);
      return madeAnew && store ? { ...store, createdAt: store.createdAt + 1 } : store;
    };
    const use = h.pool.use.bind(h.pool);
    h.pool.use = ((slug: string, work: never) => {
      if (slug !== "shop1" || madeAnew) return use(slug, work);
      // What a delete and a create through the management API do meanwhile.
      madeAnew = true;
      throw databaseClosed();
    }) as typeof h.pool.use;
    h.worker.start();
    h.worker.notify("shop1");
    expect((await eventually(() => allSent(h))).length).toBe(1);
    expect(h.logger.lines.filter((line) => line.level === "error")).toEqual([]);
  });
});

describe("mail worker, a store a load has not yet moved in", () => {
  test("is looked at again every second without a word, and named once after 30 s", async () => {
    let clock = Date.now();
    const h = await harness({ now: () => clock });
    await h.queue("shop1", approved("Dana"));
    let tries = 0;
    const use = h.pool.use.bind(h.pool);
    h.pool.use = ((slug: string, work: never) => {
      if (slug !== "shop1") return use(slug, work);
      tries++;
      throw new StoreArriving("stores/shop1.db is not in place yet");
    }) as typeof h.pool.use;
    h.worker.start();
    h.worker.notify("shop1");
    const errors = () => h.logger.lines.filter((line) => line.level === "error");
    for (let second = 1; second <= 29; second++) {
      clock += 1000;
      const before = tries;
      await eventually(() => (tries > before ? true : undefined));
    }
    expect(errors()).toEqual([]);
    clock += 2000;
    const before = tries;
    await eventually(() => (tries > before ? true : undefined));
    expect(errors().map((line) => [line.msg, line.store, line.error])).toEqual([
      ["mail: cannot process a store's outbox", "shop1", "stores/shop1.db is not in place yet"],
    ]);
  });
});

describe("mail worker, a store out of reach", () => {
  test("its outbox is tried again and again but logged once, and once more when it works again", async () => {
    const h = await harness();
    await h.queue("shop1", approved("Dana"));
    const use = h.pool.use.bind(h.pool);
    let tries = 0;
    let reachable = false;
    h.pool.use = ((slug: string, work: never) => {
      if (slug !== "shop1" || reachable) return use(slug, work);
      tries++;
      throw new Error("stores/shop1.db was replaced under the server");
    }) as typeof h.pool.use;
    const outboxLines = () =>
      h.logger.lines
        .filter((line) => String(line.msg).includes("outbox"))
        .map((line) => `${line.level} ${line.msg} ${line.store}`);
    h.worker.start();
    h.worker.notify("shop1");
    await eventually(() => (tries >= 5 ? tries : undefined));
    expect(outboxLines()).toEqual(["error mail: cannot process a store's outbox shop1"]);
    reachable = true;
    expect((await eventually(() => allSent(h))).length).toBe(1);
    expect(outboxLines()).toEqual([
      "error mail: cannot process a store's outbox shop1",
      "info mail: a store's outbox works again shop1",
    ]);
  });
});

describe("mail worker, other transports", () => {
  test("--mail-dir writes one .eml file per outbox row, replaced (not added) on a repeat", async () => {
    const home = tempDir("storeapi-maildir-");
    const mailDir = join(home, "out");
    cleanups.push(async () => rmSync(home, { recursive: true, force: true }));
    const h = await harness({ mailDir });
    await h.queue("shop1", approved("דנה"));
    await h.queue("shop2", statusMail("RR1"));
    h.worker.start();
    const [shop1Row] = await eventually(() => allSent(h, "shop1"));
    const [shop2Row] = await eventually(() => allSent(h, "shop2"));
    const shop1File = `shop1-1-${shop1Row.created_at}.eml`;
    const shop2File = `shop2-1-${shop2Row.created_at}.eml`;
    expect(readdirSync(mailDir).sort()).toEqual([shop1File, shop2File]);

    const first = readFileSync(join(mailDir, shop1File), "latin1");
    const parsed = parseMessage(first);
    expect(parsed.headers.subject).toBe(`Your ${HEBREW_STORE} account is approved`);
    expect(parsed.headers.to).toBe("dana@example.com");
    expect(parseAddress(parsed.headers.from)).toEqual({
      name: HEBREW_STORE,
      address: "no-reply@localhost",
    });
    expect(parsed.headers.date).toBeDefined();
    expect(parsed.text).toStartWith("Hello דנה,");
    expect(parseMessage(readFileSync(join(mailDir, shop2File), "latin1")).text).toContain(
      "Tracking number: RR1",
    );

    // A crash before marking would deliver the row again: the same file is replaced.
    await h.pool.use("shop1", (db) =>
      db.run("UPDATE outbox SET status = 'queued', next_attempt_at = 0 WHERE id = 1"),
    );
    h.worker.notify("shop1");
    const [again] = await eventually(async () => {
      const rows = await h.rows();
      return rows[0].attempts === 2 && rows[0].status === "sent" ? rows : undefined;
    });
    expect(again.attempts).toBe(2);
    expect(readdirSync(mailDir).sort()).toEqual([shop1File, shop2File]);
    expect(
      parseMessage(readFileSync(join(mailDir, shop1File), "latin1")).headers["message-id"],
    ).toBe(parsed.headers["message-id"]);
  });

  test("without SMTP or a mail dir, each email is one log line with its text", async () => {
    const h = await harness();
    expect(h.worker.transportName).toBe("log");
    await h.queue("shop1", statusMail("SECRET-TRACKING"));
    h.worker.start();
    await eventually(() => allSent(h));
    const lines = h.logger.lines.filter((l) => l.msg === "email");
    expect(lines.length).toBe(1);
    const { time, ...line } = lines[0];
    expect(typeof time).toBe("string");
    expect(line).toEqual({
      level: "info",
      msg: "email",
      store: "shop1",
      outboxId: 1,
      kind: "order_status",
      from: `${HEBREW_STORE} <no-reply@localhost>`,
      to: "dana@example.com",
      subject: "Order #1001: Shipped",
      text: expect.stringContaining("SECRET-TRACKING"),
    });
  });
});
