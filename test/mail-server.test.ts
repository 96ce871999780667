import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadFixture } from "../src/load/load";
import { startTestServer, type TestServer, tempDir, testStore } from "./helpers";
import { eventually, parseAddress, type SmtpPeer, startSmtp } from "./mail-support";
import { runCli, spawnServer } from "./process";
import { testLocation } from "./sqld";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function smtp(options: Parameters<typeof startSmtp>[0] = {}): Promise<SmtpPeer> {
  const peer = await startSmtp(options);
  cleanups.push(() => peer.close());
  return peer;
}

async function serve(
  dataDir: string,
  peer: SmtpPeer,
  flags: Record<string, string> = {},
): Promise<TestServer> {
  const server = await startTestServer({ dataDir, flags: { smtp: peer.url, ...flags } });
  cleanups.unshift(() => server.stop()); // stop the server before its SMTP peer
  return server;
}

async function fixtureDir(stores: unknown[]): Promise<string> {
  const dataDir = tempDir("storeapi-mailsrv-");
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  await loadFixture(await testLocation(dataDir), { stores });
  return dataDir;
}

const outbox = async (dataDir: string) =>
  (await runCli(["mail", "list", "--json", "--data", dataDir])).json;

describe("mail through the running server", () => {
  test("a key created with the CLI while the server runs is emailed to the owner by that server", async () => {
    const peer = await smtp();
    const dataDir = await fixtureDir([testStore({ name: "חנות הבדיקות" })]);
    await serve(dataDir, peer, { "mail-from": "robot@mail.example.com" });
    const created = await runCli([
      "keys",
      "create",
      "shop1",
      "--name",
      "מלאי",
      "--products",
      "write",
      "--json",
      "--data",
      dataDir,
    ]);
    expect(created.code).toBe(0);

    const [message] = await peer.waitFor(1);
    expect(message.envelopeTo).toEqual(["owner@shop1.test"]);
    expect(message.envelopeFrom).toBe("robot@mail.example.com");
    expect(parseAddress(message.headers.from)).toEqual({
      name: "חנות הבדיקות",
      address: "robot@mail.example.com",
    });
    expect(message.headers.subject).toBe('API key "מלאי" created for חנות הבדיקות');
    expect(message.text).toContain(`Key: ${created.json.hint}\n`);
    expect(message.text).toContain("Permissions: products:write\n");
    expect(message.text).toContain("(command line)");
    expect(message.raw).not.toContain(created.json.key);

    const listed = await eventually(async () => {
      const entries = await outbox(dataDir);
      return entries.length === 1 && entries[0].status === "sent" ? entries : undefined;
    });
    expect(listed[0]).toMatchObject({
      id: 1,
      store: "shop1",
      kind: "key_created",
      to: "owner@shop1.test",
      status: "sent",
      attempts: 1,
      lastError: null,
    });
    expect(listed[0].sentAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  test("mail queued while no server ran is delivered by the next to start", async () => {
    const peer = await smtp();
    const dataDir = await fixtureDir([testStore()]);
    const created = await runCli([
      "keys",
      "create",
      "shop1",
      "--name",
      "offline",
      "--orders",
      "read",
      "--json",
      "--data",
      dataDir,
    ]);
    const deleted = await runCli([
      "keys",
      "delete",
      "shop1",
      String(created.json.id),
      "--data",
      dataDir,
    ]);
    expect([created.code, deleted.code]).toEqual([0, 0]);
    expect(
      (await outbox(dataDir)).map((e: { kind: string; status: string }) => [e.kind, e.status]),
    ).toEqual([
      ["key_created", "queued"],
      ["key_deleted", "queued"],
    ]);

    await serve(dataDir, peer);
    const messages = await peer.waitFor(2);
    expect(messages.map((m) => m.headers.subject).sort()).toEqual([
      'API key "offline" created for Test Shop',
      'API key "offline" deleted for Test Shop',
    ]);
    await eventually(async () =>
      (await outbox(dataDir)).every((e: { status: string }) => e.status === "sent")
        ? true
        : undefined,
    );
  });

  test("approving a pending customer through the API emails the customer", async () => {
    const peer = await smtp();
    const dataDir = await fixtureDir([
      testStore({
        name: "Test Shop",
        settings: { manualCustomerApproval: true, notifyStatusChange: true, registration: true },
        customers: [
          {
            id: 5,
            email: "noa@example.com",
            firstName: "נועה",
            lastName: "כהן",
            status: "pending",
          },
        ],
      }),
    ]);
    const server = await serve(dataDir, peer);
    const answer = await server.request("/api/v1/customers/5", {
      method: "PATCH",
      body: { active: true },
    });
    expect(answer.status).toBe(200);

    const [message] = await peer.waitFor(1);
    expect(message.envelopeTo).toEqual(["noa@example.com"]);
    expect(message.headers.subject).toBe("Your Test Shop account is approved");
    expect(message.headers["reply-to"]).toBe("owner@shop1.test");
    expect(message.text).toStartWith("Hello נועה,\n\n");
    expect(message.text).toContain("You can now log in.");
  });

  test("SIGTERM lets the server finish the message in hand, then it exits 0", async () => {
    let inHand: () => void = () => {};
    const handedOver = new Promise<void>((resolve) => (inHand = resolve));
    const peer = await smtp({ acceptDelayMs: 700, onDataStart: () => inHand() });
    const dataDir = await fixtureDir([testStore()]);
    expect(
      (
        await runCli([
          "keys",
          "create",
          "shop1",
          "--name",
          "late",
          "--orders",
          "read",
          "--data",
          dataDir,
        ])
      ).code,
    ).toBe(0);
    const server = await spawnServer(dataDir, ["--smtp", peer.url]);
    cleanups.unshift(async () => {
      server.proc.kill("SIGKILL");
    });
    await handedOver;
    expect(await server.signal("SIGTERM")).toBe(0);
    expect(peer.messages.map((m) => m.headers.subject)).toEqual([
      'API key "late" created for Test Shop',
    ]);
    expect(
      (await outbox(dataDir)).map((e: { status: string; attempts: number }) => [
        e.status,
        e.attempts,
      ]),
    ).toEqual([["sent", 1]]);
  });

  test("an order status change with notifyCustomer emails the customer the status, number and tracking number", async () => {
    const peer = await smtp();
    const dataDir = await fixtureDir([
      testStore({
        name: "חנות הבדיקות",
        orders: [
          {
            id: 1,
            number: 1001,
            status: 1,
            total: 100,
            customer: { name: "דנה לוי", email: "dana@example.com" },
          },
          {
            id: 2,
            number: 1002,
            status: 1,
            total: 50,
            customer: { name: "Dan", email: "dan@example.com" },
          },
        ],
      }),
    ]);
    const server = await serve(dataDir, peer);
    const shipped = await server.request("/api/v1/orders/1", {
      method: "PATCH",
      body: { status: 3, trackingNumber: "RR123456789IL", notifyCustomer: true },
    });
    expect([shipped.status, shipped.json.data.customerNotified]).toEqual([200, true]);
    const delivered = await server.request("/api/v1/orders/2", {
      method: "PATCH",
      body: { status: 7, notifyCustomer: true },
    });
    expect([delivered.status, delivered.json.data.customerNotified]).toEqual([200, true]);

    const messages = await peer.waitFor(2);
    const to = (address: string) => {
      const message = messages.find((m) => m.envelopeTo[0] === address);
      if (!message) throw new Error(`no email to ${address}`);
      return message;
    };
    const first = to("dana@example.com");
    expect(first.headers.subject).toBe("Order #1001: Shipped");
    expect(parseAddress(first.headers.from).name).toBe("חנות הבדיקות");
    expect(first.text).toStartWith("Hello דנה לוי,\n\n");
    expect(first.text).toContain("Order: #1001\nStatus: Shipped\nTracking number: RR123456789IL\n");
    const second = to("dan@example.com");
    expect(second.headers.subject).toBe("Order #1002: Delivered");
    expect(second.text).toContain("Order: #1002\nStatus: Delivered\n");
    expect(second.text).not.toContain("Tracking");
  });
});
