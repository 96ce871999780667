import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { platformMigrations, storeMigrations } from "../src/db/migrations";
import { loadFixture } from "../src/load/load";
import { KEYS, scratchDirs, send, testStore } from "./helpers";
import { isOneCleanLine, runCli, runCliInProcess, spawnServer } from "./process";
import { TEST_LIBSQL, testLocation } from "./sqld";

// What a first-time operator types, and what they read back (issue 13, items 9 and 10 and
// "CLI messages"; issue 19, item 1).

const freshDir = scratchDirs("storeapi-cli-operator-");
const freshData = () => join(freshDir(), "data");

/** `stores add` with the usual flags; `flags` may give its own `--domain`. */
const add = (data: string, slug: string, ...flags: string[]) =>
  runCli([
    "stores",
    "add",
    slug,
    ...(flags.includes("--domain") ? [] : ["--domain", `${slug}.example.com`]),
    "--plan",
    "growth",
    "--owner-email",
    `owner@${slug}.example.com`,
    ...flags,
    "--data",
    data,
  ]);

describe("stores add/set: owner email, name and domain are checked like a fixture's", () => {
  test("an owner email that is not exactly one address is exit 2 with one line, and nothing is stored", async () => {
    const data = freshData();
    expect((await add(data, "shop1")).code).toBe(0);
    const cases: Array<[string[], string]> = [
      [
        [
          "stores",
          "add",
          "shop2",
          "--domain",
          "shop2.example.com",
          "--plan",
          "growth",
          "--owner-email",
          "a@x.com, bcc@evil.com",
        ],
        '"a@x.com, bcc@evil.com"',
      ],
      [
        [
          "stores",
          "add",
          "shop2",
          "--domain",
          "shop2.example.com",
          "--plan",
          "growth",
          "--owner-email",
          "a@x.com\r\nBcc: e@evil.com",
        ],
        '"a@x.com\\r\\nBcc: e@evil.com"',
      ],
      [["stores", "set", "shop1", "--owner-email", "Owner <a@x.com>"], '"Owner <a@x.com>"'],
      [["stores", "set", "shop1", "--owner-email", "a@x.com b@y.com"], '"a@x.com b@y.com"'],
    ];
    for (const [args, shown] of cases) {
      const result = await runCli([...args, "--data", data]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `storeapi: --owner-email ${shown} must be a valid email address.\n`,
      );
    }
    const list = await runCli(["stores", "list", "--json", "--data", data]);
    expect(
      list.json.map((s: { slug: string; ownerEmail: string }) => [s.slug, s.ownerEmail]),
    ).toEqual([["shop1", "owner@shop1.example.com"]]);
  });

  test("--name is 1 to 100 characters", async () => {
    const data = freshData();
    const long = "n".repeat(101);
    expect((await add(data, "shop1", "--name", long)).stderr).toBe(
      `storeapi: --name "${"n".repeat(100)}…" must be at most 100 characters long.\n`,
    );
    expect((await add(data, "shop1", "--name", "")).stderr).toBe(
      "storeapi: --name needs a value\n",
    );
    expect((await add(data, "shop1", "--name", "n".repeat(100))).code).toBe(0);
    expect((await runCli(["stores", "set", "shop1", "--name", long, "--data", data])).code).toBe(2);
  });

  test("an own domain under the platform domain, localhost, an IP literal or a trailing dot is refused", async () => {
    const data = freshData();
    expect((await add(data, "shop1")).code).toBe(0);
    const domain = async (value: string, ...flags: string[]) => {
      const result = await runCli([
        "stores",
        "add",
        "shop2",
        "--domain",
        value,
        "--plan",
        "growth",
        "--owner-email",
        "o@shop2.example.com",
        ...flags,
        "--data",
        data,
      ]);
      expect(result.code).toBe(2);
      expect(isOneCleanLine(result.stderr)).toBe(true);
      return result.stderr;
    };
    const under = (name: string, platform: string) =>
      `storeapi: --domain "${name}" lies under the platform domain "${platform}", where {slug}.${platform} addresses live; use the store's own domain\n`;
    expect(await domain("shop1.localhost")).toBe(under("shop1.localhost", "localhost"));
    expect(await domain("X.Shop1.LocalHost")).toBe(under("x.shop1.localhost", "localhost"));
    expect(
      await domain("shop1.stores.example.net", "--platform-domain", "stores.example.net"),
    ).toBe(under("shop1.stores.example.net", "stores.example.net"));
    expect(await domain("stores.example.net", "--platform-domain", "stores.example.net")).toBe(
      under("stores.example.net", "stores.example.net"),
    );
    expect(await domain("localhost")).toBe(
      'storeapi: --domain "localhost" must be a host name with at least two labels, like shop.example.com.\n',
    );
    expect(await domain("127.0.0.1")).toBe(
      'storeapi: --domain "127.0.0.1" must be a host name, not an IP address.\n',
    );
    expect(await domain("shop2.example.com.")).toBe(
      'storeapi: --domain "shop2.example.com." must not end with a dot.\n',
    );
    // stores set, and the platform domain from the environment, as serve reads it
    const set = await runCli([
      "stores",
      "set",
      "shop1",
      "--domain",
      "shop2.localhost",
      "--data",
      data,
    ]);
    expect([set.code, set.stderr]).toEqual([2, under("shop2.localhost", "localhost")]);
    const fromEnv = await runCli(
      ["stores", "set", "shop1", "--domain", "a.shops.example.org", "--data", data],
      {
        env: { STOREAPI_PLATFORM_DOMAIN: "shops.example.org" },
      },
    );
    expect([fromEnv.code, fromEnv.stderr]).toEqual([
      2,
      under("a.shops.example.org", "shops.example.org"),
    ]);
    // the same name is fine when the platform domain is elsewhere
    expect(
      (await add(data, "shop3", "--domain", "shop3.localhost", "--platform-domain", "example.net"))
        .code,
    ).toBe(0);
    const list = await runCli(["stores", "list", "--json", "--data", data]);
    expect(list.json.map((s: { domain: string }) => s.domain)).toEqual([
      "shop1.example.com",
      "shop3.localhost",
    ]);
  });

  // Another process holds platform.db's write lock (as the server's PATCH does) and gives
  // the domain to another store; it commits once `stores set` has checked and waits.
  test.skipIf(TEST_LIBSQL)(
    "a domain another process took while stores set waited is named, not a SQLite error",
    async () => {
      const data = freshData();
      for (const slug of ["shop1", "shop2"]) expect((await add(data, slug)).code).toBe(0);
      const other = new Database(join(data, "platform.db"));
      try {
        other.exec("PRAGMA busy_timeout = 5000");
        other.exec("BEGIN IMMEDIATE");
        other.prepare("UPDATE stores SET domain = 'taken.example.com' WHERE slug = 'shop2'").run();
        const set = runCli([
          "stores",
          "set",
          "shop1",
          "--domain",
          "taken.example.com",
          "--data",
          data,
        ]);
        await Bun.sleep(2000);
        other.exec("COMMIT");
        const result = await set;
        expect([result.code, result.stderr]).toEqual([
          1,
          'storeapi: domain "taken.example.com" already belongs to another store\n',
        ]);
      } finally {
        other.close();
      }
    },
  );

  test("stores set with nothing to change is exit 2 and says so", async () => {
    const data = freshData();
    expect((await add(data, "shop1")).code).toBe(0);
    const result = await runCli(["stores", "set", "shop1", "--data", data]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      "storeapi: nothing to change: give at least one of --plan, --domain, --manual-approval, --notify-status, --registration, --name, --owner-email\n",
    );
  });
});

describe("load: the same store rules", () => {
  const loadStores = async (stores: unknown[], ...flags: string[]) => {
    const data = freshData();
    const file = join(data, "..", "fixture.json");
    writeFileSync(file, JSON.stringify({ stores }));
    return runCli(["load", file, ...flags, "--data", data]);
  };

  test("an own domain under the platform domain is refused with its path", async () => {
    const refused = await loadStores([testStore({ domain: "x.shop2.localhost" })]);
    expect([refused.code, refused.stderr]).toEqual([
      1,
      'storeapi: fixture refused, nothing loaded: stores[0].domain: must not lie under the platform domain "localhost": {slug}.localhost addresses live there.\n',
    ]);
    const other = await loadStores(
      [testStore({ domain: "shop1.shops.example.org" })],
      "--platform-domain",
      "shops.example.org",
    );
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(
      'stores[0].domain: must not lie under the platform domain "shops.example.org"',
    );
    expect(
      (
        await loadStores(
          [testStore({ domain: "shop1.localhost" })],
          "--platform-domain",
          "example.net",
        )
      ).code,
    ).toBe(0);
  });

  test("a trailing dot, an IP literal, a second owner address are refused with their path", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ domain: "shop1.test." }, "stores[0].domain: must not end with a dot."],
      [{ domain: "10.1.2.3" }, "stores[0].domain: must be a host name, not an IP address."],
      [{ ownerEmail: "a@x.com, b@y.com" }, "stores[0].ownerEmail: must be a valid email address."],
      [{ name: "" }, "stores[0].name: must not be empty."],
      [{ name: "  " }, "stores[0].name: must have a visible character, not only spaces."],
      [
        { keys: [{ name: " ", permissions: { orders: "read" } }] },
        "stores[0].keys[0].name: must have a visible character, not only spaces.",
      ],
      [
        { orderStatuses: [{ id: 1, name: "\t" }] },
        "stores[0].orderStatuses[0].name: must have a visible character, not only spaces.",
      ],
    ];
    for (const [overrides, message] of cases) {
      const result = await loadStores([testStore(overrides)]);
      expect([result.code, result.stderr]).toEqual([
        1,
        `storeapi: fixture refused, nothing loaded: ${message}\n`,
      ]);
    }
  });

  test("an unknown field is named with its path and a sentence, not the validator's words", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ colour: "red" }, "stores[0].colour"],
      [{ settings: { registration: true, colour: "red" } }, "stores[0].settings.colour"],
      [
        { customers: [{ email: "a@b.example.com", colour: "red" }] },
        "stores[0].customers[0].colour",
      ],
    ];
    for (const [overrides, path] of cases) {
      const result = await loadStores([testStore(overrides)]);
      expect([result.code, result.stderr]).toEqual([
        1,
        `storeapi: fixture refused, nothing loaded: ${path}: is not a field here; remove it or check its spelling.\n`,
      ]);
    }
  });
});

describe("keys create", () => {
  test("a blank or too long --name is named the same way by every command that takes one", async () => {
    const data = freshData();
    expect((await add(data, "shop1")).code).toBe(0);
    const commands = [
      ["keys", "create", "shop1", "--orders", "read"],
      ["host-keys", "create"],
      ["stores", "set", "shop1"],
    ];
    for (const command of commands) {
      for (const [name, problem] of [
        ["  ", "must have a visible character, not only spaces."],
        ["\u200b", "must have a visible character, not only spaces."],
        ["x".repeat(101), "must be at most 100 characters long."],
      ]) {
        const result = await runCli([...command, "--name", name, "--data", data]);
        const shown = name.length > 100 ? `${name.slice(0, 100)}…` : name;
        expect([command.join(" "), result.code, result.stderr]).toEqual([
          command.join(" "),
          2,
          `storeapi: --name ${JSON.stringify(shown)} ${problem}\n`,
        ]);
      }
    }
  });

  test("a key with no permission at all is refused (exit 2); the notice is said to be queued", async () => {
    const data = freshData();
    expect((await add(data, "shop1")).code).toBe(0);
    const none = await runCli(["keys", "create", "shop1", "--name", "idle", "--data", data]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(
      "storeapi: a key needs at least one permission: give --products, --orders, --customers or --leads as read or write\n",
    );
    const allNone = await runCli([
      "keys",
      "create",
      "shop1",
      "--name",
      "idle",
      "--orders",
      "none",
      "--leads",
      "none",
      "--data",
      data,
    ]);
    expect(allNone.code).toBe(2);
    expect((await runCli(["keys", "list", "shop1", "--json", "--data", data])).json).toEqual([]);

    const created = await runCli([
      "keys",
      "create",
      "shop1",
      "--name",
      "erp",
      "--orders",
      "read",
      "--data",
      data,
    ]);
    expect(created.code).toBe(0);
    expect(created.stdout).toEndWith(
      "This is the only time the key is shown; store it now. An email to the store owner is queued.\n",
    );
    const deleted = await runCli(["keys", "delete", "shop1", "1", "--data", data]);
    expect(deleted.stdout).toMatch(
      /^deleted key 1 "erp" \(svc_sk_…\w{4}\) from shop1; an email to the store owner is queued\n$/,
    );
  });
});

describe("command-line messages", () => {
  test("an unknown option or a missing value is one line in the operator's words", async () => {
    const data = freshData();
    const cases: Array<[string[], string]> = [
      [
        ["stores", "add", "shop1", "--colour", "red"],
        'unknown option --colour for "storeapi stores add"; see storeapi stores add --help',
      ],
      [
        ["stores", "list", "-x"],
        'unknown option -x for "storeapi stores list"; see storeapi stores list --help',
      ],
      [["stores", "add", "shop1", "--plan", "growth", "--domain"], "--domain needs a value"],
      [["stores", "add", "shop1", "--domain", "--plan", "growth"], "--domain needs a value"],
      [["keys", "list", "shop1", "--json=yes"], "--json takes no value"],
      [["stores", "list", "--help=no"], "--help takes no value"],
      // The last used to win: a key meant to write orders that cannot.
      [
        ["keys", "create", "shop1", "--name", "erp", "--orders", "write", "--orders=none"],
        "--orders is given more than once; give it once",
      ],
      [["stores", "list", "--data", "/elsewhere"], "--data is given more than once; give it once"],
      // A lone surrogate reaches the process as bytes that are not UTF-8.
      ...["x\uFFFDy", "x\uD800y"].map((name): [string[], string] => [
        ["keys", "create", "shop1", "--name", name, "--products", "read"],
        "--name is not UTF-8 text (it holds bytes that are not, or U+FFFD); give it in UTF-8",
      ]),
      // An argument too: backup made a directory of another name and said it was done.
      [
        ["backup", "/tmp/storeapi-bk\uD800"],
        "DEST_DIR is not UTF-8 text (it holds bytes that are not, or U+FFFD); give it in UTF-8",
      ],
      [["serve", "--listen"], "--listen needs a value"],
      [
        ["serve", "--rate-limit", "-1"],
        '--rate-limit needs a value (a value that starts with "-" is written --rate-limit=-1)',
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runCli([...args, "--data", data]);
      expect([args.join(" "), result.code, result.stderr]).toEqual([
        args.join(" "),
        2,
        `storeapi: ${message}\n`,
      ]);
    }
  });

  // A number of ten digits was "not a positive whole number"; a value was quoted whole.
  test("a number past what a setting takes says the most it takes; a long value is quoted cut", async () => {
    const data = freshData();
    expect((await add(data, "shop1")).code).toBe(0);
    const serve = (...flags: string[]) =>
      runCliInProcess(["serve", "--data", data, "--listen", "127.0.0.1:0", ...flags]);
    const big = await serve("--rate-limit", "9999999999");
    expect([big.code, big.stderr]).toEqual([
      2,
      "storeapi: --rate-limit must be at most 999999999, not 9999999999\n",
    ]);
    const long = await serve(
      "--trust-proxy",
      "10.0.0.0/8",
      "--auth-failure-limit",
      "7".repeat(5000),
    );
    expect(long.stderr).toBe(
      `storeapi: --auth-failure-limit must be at most 999999999, not ${"7".repeat(100)}…\n`,
    );
    const listen = await runCliInProcess(["serve", "--data", data, "--listen", "x".repeat(5000)]);
    expect(listen.stderr).toBe(`storeapi: --listen must be HOST:PORT, not "${"x".repeat(100)}…"\n`);
  });

  test("an environment variable's mistake names the variable", async () => {
    const data = freshData();
    expect((await add(data, "shop1")).code).toBe(0);
    const result = await runCli(["serve", "--data", data, "--listen", "127.0.0.1:0"], {
      env: { STOREAPI_RATE_LIMIT: "abc" },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'storeapi: STOREAPI_RATE_LIMIT must be a positive whole number, not "abc"\n',
    );
    const flag = await runCli([
      "serve",
      "--data",
      data,
      "--listen",
      "127.0.0.1:0",
      "--rate-limit",
      "abc",
    ]);
    expect(flag.stderr).toBe('storeapi: --rate-limit must be a positive whole number, not "abc"\n');
    // A switch that is neither on nor off is refused, not taken as off.
    const unclear = await runCli(["serve", "--data", data, "--listen", "127.0.0.1:0"], {
      env: { STOREAPI_ALLOW_HTTP: "maybe" },
    });
    expect(unclear.code).toBe(2);
    expect(unclear.stderr).toBe(
      'storeapi: STOREAPI_ALLOW_HTTP must be 1, true, on or yes (or 0, false, off, no), not "maybe"\n',
    );
  });

  test("the platform domain, the sender and the SMTP URL are checked where they are given", async () => {
    const data = freshData();
    expect((await add(data, "shop1")).code).toBe(0);
    const serve = ["serve", "--data", data, "--listen", "127.0.0.1:0", "--allow-http"];
    const cases: Array<[string[], Record<string, string>, string]> = [
      [
        ["--platform-domain=-bad-"],
        {},
        '--platform-domain "-bad-" must be a host name like stores.example.com or localhost.',
      ],
      [
        [],
        { STOREAPI_PLATFORM_DOMAIN: "a..b" },
        'STOREAPI_PLATFORM_DOMAIN "a..b" must be a host name like stores.example.com or localhost.',
      ],
      [
        ["--mail-from", "x,y@example.com"],
        {},
        '--mail-from "x,y@example.com" must be an address like no-reply@example.com, or "Shop <no-reply@example.com>".',
      ],
      [
        [],
        { STOREAPI_SMTP: "mail.example.com" },
        "STOREAPI_SMTP must be a URL like smtp://user:pass@host:port or smtps://…",
      ],
      [
        ["--smtp", "smtp://u:%ZZsecret@h:25"],
        {},
        "--smtp: the password has a bad %-escape; write % itself as %25",
      ],
    ];
    for (const [args, env, message] of cases) {
      const result = await runCli([...serve, ...args], { env });
      expect([args, env, result.code, result.stderr]).toEqual([
        args,
        env,
        2,
        `storeapi: ${message}\n`,
      ]);
    }
    const added = await add(data, "shop2", "--platform-domain", "stores..example.com");
    expect([added.code, added.stderr]).toEqual([
      2,
      'storeapi: --platform-domain "stores..example.com" must be a host name like stores.example.com or localhost.\n',
    ]);
  });

  test("a busy port is one clear line naming the address, exit 1", async () => {
    const data = freshData();
    expect((await add(data, "shop1")).code).toBe(0);
    const taken = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("taken") });
    try {
      const result = await runCli([
        "serve",
        "--data",
        data,
        "--listen",
        `127.0.0.1:${taken.port}`,
        "--allow-http",
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `storeapi: address 127.0.0.1:${taken.port} is already in use; stop what listens there or pick another --listen\n`,
      );
    } finally {
      taken.stop(true);
    }
  });

  test("an address that is not this machine's is one line naming the flag, exit 1", async () => {
    const data = freshData();
    expect((await add(data, "shop1")).code).toBe(0);
    // 192.0.2.0/24 is kept for documentation (RFC 5737): no machine has it.
    const serve = (...flags: string[]) =>
      runCli(["serve", "--data", data, "--allow-http", ...flags], { underTest: true });
    const api = await serve("--listen", "192.0.2.1:8080");
    expect([api.code, api.stderr]).toEqual([
      1,
      "storeapi: address 192.0.2.1:8080 is not an address of this machine; pick another --listen\n",
    ]);
    const metrics = await serve("--listen", "127.0.0.1:0", "--metrics-listen", "192.0.2.1:9090");
    expect([metrics.code, metrics.stderr]).toEqual([
      1,
      "storeapi: address 192.0.2.1:9090 is not an address of this machine; pick another --metrics-listen\n",
    ]);
    // `.invalid` never resolves (RFC 6761); `foo..bar` is no host name at all.
    for (const host of ["nosuchhost.invalid", "foo..bar"]) {
      const unnamed = await serve("--listen", `${host}:8080`);
      expect(unnamed.code).toBe(1);
      expect(isOneCleanLine(unnamed.stderr)).toBe(true);
      expect(unnamed.stderr).toContain(`${host}:8080`);
      expect(unnamed.stderr).toEndWith("; pick another --listen\n");
    }
  });

  test("a second server on a running server's port is refused, not given half its connections", async () => {
    const first = freshData();
    const second = freshData();
    expect((await add(first, "shop1")).code).toBe(0);
    expect((await add(second, "shop2")).code).toBe(0);
    const server = await spawnServer(first);
    try {
      const { port } = new URL(server.url);
      const address = `127.0.0.1:${port}`;
      const serve = (...flags: string[]) =>
        runCli(["serve", "--data", second, "--allow-http", ...flags], {
          underTest: true,
          timeoutMs: 20_000,
        });
      const taken = await serve("--listen", address);
      expect([taken.code, taken.stderr]).toEqual([
        1,
        `storeapi: address ${address} is already in use; stop what listens there or pick another --listen\n`,
      ]);
      const metrics = await serve("--listen", "127.0.0.1:0", "--metrics-listen", address);
      expect([metrics.code, metrics.stderr]).toEqual([
        1,
        `storeapi: address ${address} is already in use; stop what listens there or pick another --metrics-listen\n`,
      ]);
      // Every request still reaches the first server.
      for (let i = 0; i < 20; i++) {
        const answer = await send(server.url, "/api/v1/orders", {
          host: "shop1.example.com",
          key: null,
        });
        expect(answer.status).toBe(401);
      }
    } finally {
      await server.signal("SIGTERM");
    }
  });
});

describe("--version and --help", () => {
  test("--version prints storeapi X.Y.Z from package.json, then the libSQL and Bun versions", async () => {
    const { version } = JSON.parse(
      readFileSync(join(import.meta.dir, "..", "package.json"), "utf8"),
    );
    const result = await runCli(["--version"]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe(`storeapi ${version}`);
    expect(lines[1]).toMatch(/^libSQL \d+\.\d+\.\d+ \(SQLite \d+\.\d+\.\d+\), Bun \d+\.\d+\.\d+/);
    // The schema versions it migrates to: two builds of one version number may differ.
    const [platform, store] = [platformMigrations, storeMigrations].map((m) => m.at(-1)?.version);
    expect(lines.slice(2)).toEqual([`schema: platform.db ${platform}, stores ${store}`, ""]);
    const json = await runCli(["--version", "--json"]);
    expect(json.code).toBe(0);
    expect(Object.keys(json.json)).toEqual(["storeapi", "libsql", "sqlite", "runtime", "schema"]);
    expect(json.json.schema).toEqual({ platform, store });
    expect(json.json.storeapi).toBe(version);
    expect(`libSQL ${json.json.libsql} (SQLite ${json.json.sqlite}), ${json.json.runtime}`).toBe(
      lines[1],
    );
    const extra = await runCli(["--version", "--data", "x"]);
    expect([extra.code, extra.stderr]).toEqual([
      2,
      'storeapi: --version takes only --json, not "--data"\n',
    ]);
  });

  // Every flag of operations.md, per command: each command's --help lists them all.
  const FLAGS: Record<string, string[]> = {
    serve: [
      "--listen HOST:PORT",
      "--tls-cert FILE",
      "--tls-key FILE",
      "--trust-proxy CIDRS",
      "--allow-http",
      "--platform-domain D",
      "--rate-limit N",
      "--auth-failure-limit N",
      "--smtp URL",
      "--mail-dir DIR",
      "--mail-from ADDR",
      "--log-level L",
      "--metrics-listen HOST:PORT",
      "--max-open-stores N",
      "--manage-rate-limit N",
    ],
    load: ["--replace", "--platform-domain D"],
    "stores add": ["--domain D", "--plan P", "--owner-email E", "--name N", "--platform-domain D"],
    "stores set": [
      "--plan P",
      "--domain D",
      "--manual-approval on/off",
      "--notify-status on/off",
      "--registration on/off",
      "--name N",
      "--owner-email E",
    ],
    "stores list": [],
    "keys create": [
      "--name N",
      "--products P",
      "--orders P",
      "--customers P",
      "--leads P",
      "--expires never/30d/90d/1y",
    ],
    "keys list": [],
    "keys delete": [],
    "mail list": ["--store SLUG"],
    openapi: [],
    backup: [],
  };
  FLAGS.demo = FLAGS.serve;

  test("every command's --help lists every flag it takes, and exits 0", async () => {
    const results = await Promise.all(
      Object.keys(FLAGS).map((name) => runCli([...name.split(" "), "--help"])),
    );
    for (const [i, [name, flags]] of Object.entries(FLAGS).entries()) {
      const { code, stdout, stderr } = results[i];
      expect([name, code, stderr]).toEqual([name, 0, ""]);
      expect(stdout).toStartWith(`Usage: storeapi ${name}`);
      const listed = [...stdout.matchAll(/^ {2}(--[a-z-]+(?: \S+)?)/gm)].map((m) => m[1]);
      expect([name, listed]).toEqual([
        name,
        expect.arrayContaining([...flags, "--data DIR", "--json", "--help"]),
      ]);
    }
  });

  test("a group's --help lists its commands; the overview names every command", async () => {
    const keys = await runCli(["keys", "--help"]);
    expect(keys.code).toBe(0);
    expect(keys.stdout).toContain(
      "  keys create SLUG --name N [--products P] [--orders P] [--customers P] [--leads P] [--expires never/30d/90d/1y]\n",
    );
    expect(keys.stdout).toContain("  keys delete SLUG ID\n");
    expect(keys.stdout).not.toContain("stores add");
    const overview = await runCli(["--help"]);
    for (const name of Object.keys(FLAGS)) expect(overview.stdout).toContain(`\n  ${name}`);
  });
});

describe("Host with a trailing dot", () => {
  test("shop1.test. and shop1.localhost. reach the same store as without the dot", async () => {
    const data = freshData();
    await loadFixture(await testLocation(data), {
      stores: [testStore({ products: [{ name: "Coffee", price: 10 }] })],
    });
    const server = await spawnServer(data);
    try {
      for (const host of [
        "shop1.test",
        "shop1.test.",
        "SHOP1.TEST.:443",
        "shop1.localhost.",
        "shop1.localhost.:8080",
      ]) {
        const answer = await send(server.url, "/api/v1/products", { host, key: KEYS.all });
        expect([host, answer.status, answer.json?.data?.[0]?.name]).toEqual([host, 200, "Coffee"]);
      }
      const nothing = await send(server.url, "/api/v1/products", {
        host: "shop1.test..",
        key: KEYS.all,
      });
      expect(nothing.status).toBe(404);
    } finally {
      await server.signal("SIGKILL");
    }
  });
});
