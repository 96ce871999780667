import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { scratchDirs, testStore } from "./helpers";
import { isOneCleanLine, runCli, runCliInProcess, spawnUntil, storeapiCommand } from "./process";
import { libsqlFlagsFor, TEST_LIBSQL } from "./sqld";

const freshDir = scratchDirs("storeapi-cli-");

/** Runs a command against one data directory, in this process (these tests are about the CLI's logic). */
const inDir =
  (dir: string) =>
  (...args: string[]) =>
    runCliInProcess([...args, "--data", join(dir, "data")]);

function writeFixture(dir: string, stores: unknown[], name = "fixture.json"): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ stores }));
  return path;
}

const addShop = (run: ReturnType<typeof inDir>, slug = "shop1", domain = `${slug}.example.com`) =>
  run(
    "stores",
    "add",
    slug,
    "--domain",
    domain,
    "--plan",
    "growth",
    "--owner-email",
    `owner@${domain}`,
    "--name",
    "Shop One",
  );

describe("stores", () => {
  test("add, set and list, in text and --json", async () => {
    const run = inDir(freshDir());
    const added = await addShop(run);
    expect(added.code).toBe(0);
    expect(added.stdout).toBe(
      "created store shop1 at https://shop1.example.com/api/v1 (plan growth)\n",
    );

    const set = await run(
      "stores",
      "set",
      "shop1",
      "--plan",
      "pro",
      "--manual-approval",
      "on",
      "--registration",
      "off",
      "--json",
    );
    expect(set.code).toBe(0);
    expect(set.json).toEqual({
      slug: "shop1",
      name: "Shop One",
      domain: "shop1.example.com",
      plan: "pro",
      ownerEmail: "owner@shop1.example.com",
      settings: { manualCustomerApproval: true, notifyStatusChange: true, registration: false },
    });

    const second = await run(
      "stores",
      "add",
      "shop2",
      "--domain",
      "Shop2.Example.com",
      "--plan",
      "free",
      "--owner-email",
      "o@shop2.example.com",
      "--json",
    );
    expect(second.code).toBe(0);
    expect(second.json).toMatchObject({
      slug: "shop2",
      name: "shop2",
      domain: "shop2.example.com",
      plan: "free",
    });

    const list = await run("stores", "list", "--json");
    expect(list.code).toBe(0);
    expect(list.json.map((s: { slug: string; plan: string }) => [s.slug, s.plan])).toEqual([
      ["shop1", "pro"],
      ["shop2", "free"],
    ]);
    const text = await run("stores", "list");
    expect(text.stdout.split("\n").filter(Boolean)).toHaveLength(2);
    expect(text.stdout).toContain("shop2.example.com");
  });

  test("an existing slug or domain, or an unknown store, is exit 1 with one line", async () => {
    const run = inDir(freshDir());
    await addShop(run);
    for (const result of [
      await addShop(run),
      await addShop(run, "other", "shop1.example.com"),
      await run("stores", "set", "nope", "--plan", "pro"),
    ]) {
      expect(result.code).toBe(1);
      expect(isOneCleanLine(result.stderr)).toBe(true);
      expect(result.stdout).toBe("");
    }
    expect((await addShop(run)).stderr).toBe('storeapi: store "shop1" already exists\n');
    expect((await run("stores", "set", "nope", "--plan", "pro")).stderr).toBe(
      'storeapi: no store "nope"\n',
    );
  });

  test("bad usage is exit 2 with one line", async () => {
    const run = inDir(freshDir());
    const cases = [
      run(
        "stores",
        "add",
        "shop1",
        "--domain",
        "a.example.com",
        "--owner-email",
        "o@a.example.com",
      ), // no --plan
      run(
        "stores",
        "add",
        "shop1",
        "--domain",
        "a.example.com",
        "--plan",
        "gold",
        "--owner-email",
        "o@a.example.com",
      ),
      run(
        "stores",
        "add",
        "--domain",
        "a.example.com",
        "--plan",
        "free",
        "--owner-email",
        "o@a.example.com",
      ), // no SLUG
      run(
        "stores",
        "add",
        "Shop_1",
        "--domain",
        "a.example.com",
        "--plan",
        "free",
        "--owner-email",
        "o@a.example.com",
      ),
      run("stores", "set", "shop1", "--manual-approval", "maybe"),
      run("stores", "list", "--colour"),
      run("stores", "remove", "shop1"),
    ];
    for (const result of await Promise.all(cases)) {
      expect(result.code).toBe(2);
      expect(isOneCleanLine(result.stderr)).toBe(true);
    }
  });
});

describe("keys", () => {
  test("a name with control characters is shown escaped: it cannot drive the operator's terminal or add a line", async () => {
    const run = inDir(freshDir());
    await addShop(run);
    const name = "erp\u001b[2J\rfake\u009b\n   9  admin\tsvc_sk_…Zq1x\u2028\u202e";
    const created = await run("keys", "create", "shop1", "--name", name, "--orders", "read");
    expect(created.code).toBe(0);
    const shown = "erp\\x1b[2J\\x0dfake\\x9b\\x0a   9  admin\\x09svc_sk_…Zq1x\\u2028\\u202e";
    expect(created.stdout.split("\n")[0]).toContain(`"${shown}" for shop1`);
    const text = await run("keys", "list", "shop1");
    expect(text.stdout).toContain(shown);
    expect(text.stdout.split("\n")).toHaveLength(2); // one line and the end of it
    const raw = (out: string) =>
      ["\u001b", "\r", "\u009b", "\t", "\u2028", "\u202e"].filter((c) => out.includes(c));
    expect(raw(text.stdout)).toEqual([]);
    const json = await run("keys", "list", "shop1", "--json");
    expect(raw(json.stdout)).toEqual([]);
    expect(json.json[0].name).toBe(name);
  });

  test("create shows the key once, list never does, the owner is emailed, delete works", async () => {
    const run = inDir(freshDir());
    await addShop(run);
    const created = await run(
      "keys",
      "create",
      "shop1",
      "--name",
      "erp",
      "--orders",
      "write",
      "--products",
      "read",
      "--expires",
      "90d",
      "--json",
    );
    expect(created.code).toBe(0);
    expect(Object.keys(created.json).sort()).toEqual([
      "expiresAt",
      "hint",
      "id",
      "key",
      "permissions",
    ]);
    expect(created.json.id).toBe(1);
    expect(created.json.key).toMatch(/^svc_sk_[A-Za-z0-9]{32,}$/);
    expect(created.json.hint).toBe(`svc_sk_…${created.json.key.slice(-4)}`);
    expect(created.json.permissions).toEqual({
      products: "read",
      orders: "write",
      customers: "none",
      leads: "none",
    });
    expect(created.json.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0[23]:00$/);

    const text = await run("keys", "create", "shop1", "--name", "reports", "--leads", "read");
    expect(text.code).toBe(0);
    const shown = text.stdout.match(/svc_sk_[A-Za-z0-9]{32,}/g) ?? [];
    expect(shown).toHaveLength(1);

    const list = await run("keys", "list", "shop1", "--json");
    expect(list.code).toBe(0);
    expect(list.json).toHaveLength(2);
    expect(Object.keys(list.json[0])).toEqual(
      expect.arrayContaining([
        "id",
        "name",
        "hint",
        "permissions",
        "createdAt",
        "expiresAt",
        "lastUsedAt",
      ]),
    );
    expect(list.json[0]).toMatchObject({
      id: 1,
      name: "erp",
      hint: created.json.hint,
      expiresAt: created.json.expiresAt,
      lastUsedAt: null,
    });
    expect(list.json[1]).toMatchObject({ id: 2, name: "reports", expiresAt: null });
    const listText = await run("keys", "list", "shop1");
    for (const output of [list.stdout, listText.stdout]) {
      expect(output).not.toContain(created.json.key);
      expect(output).not.toContain(shown[0]);
    }

    const deleted = await run("keys", "delete", "shop1", "1");
    expect(deleted.code).toBe(0);
    expect(
      (await run("keys", "list", "shop1", "--json")).json.map((k: { id: number }) => k.id),
    ).toEqual([2]);
    const again = await run("keys", "delete", "shop1", "1");
    expect(again.code).toBe(1);
    expect(isOneCleanLine(again.stderr)).toBe(true);

    const mail = await run("mail", "list", "--json");
    expect(mail.code).toBe(0);
    expect(
      mail.json.map((m: { kind: string; to: string; store: string; status: string }) => [
        m.kind,
        m.to,
        m.store,
        m.status,
      ]),
    ).toEqual([
      ["key_created", "owner@shop1.example.com", "shop1", "queued"],
      ["key_created", "owner@shop1.example.com", "shop1", "queued"],
      ["key_deleted", "owner@shop1.example.com", "shop1", "queued"],
    ]);
    for (const m of mail.json) {
      expect(Object.keys(m)).toEqual(
        expect.arrayContaining([
          "id",
          "store",
          "kind",
          "to",
          "subject",
          "status",
          "attempts",
          "lastError",
          "createdAt",
          "sentAt",
        ]),
      );
      expect(JSON.stringify(m)).not.toContain(created.json.key);
    }
  });

  test("a sixth active key is refused with exit 1 and a clear line", async () => {
    const run = inDir(freshDir());
    await addShop(run);
    for (let i = 1; i <= 5; i++)
      expect(
        (await run("keys", "create", "shop1", "--name", `k${i}`, "--orders", "read")).code,
      ).toBe(0);
    const sixth = await run("keys", "create", "shop1", "--name", "k6", "--orders", "read");
    expect(sixth.code).toBe(1);
    expect(sixth.stdout).toBe("");
    expect(sixth.stderr).toBe(
      "storeapi: A store can have at most 5 active API keys; delete one first.\n",
    );
    expect((await run("keys", "list", "shop1", "--json")).json).toHaveLength(5);
    expect((await run("mail", "list", "--store", "shop1", "--json")).json).toHaveLength(5);
  });

  test("bad usage is exit 2, an unknown store exit 1", async () => {
    const run = inDir(freshDir());
    await addShop(run);
    const usage = await Promise.all([
      run("keys", "create", "shop1"), // no --name
      run("keys", "create", "shop1", "--name", "x", "--orders", "admin"),
      run("keys", "create", "shop1", "--name", "x", "--orders", "read", "--expires", "2d"),
      run("keys", "create", "shop1", "--name", "x", "--scope", "all"),
      run("keys", "delete", "shop1"),
      run("keys", "delete", "shop1", "one"),
      run("keys", "rotate", "shop1"),
      run("mail", "send"),
    ]);
    for (const result of usage) {
      expect(result.code).toBe(2);
      expect(isOneCleanLine(result.stderr)).toBe(true);
    }
    const unknown = await Promise.all([
      run("keys", "create", "nope", "--name", "x", "--orders", "read"),
      run("keys", "list", "nope"),
      run("keys", "delete", "nope", "1"),
      run("mail", "list", "--store", "nope"),
    ]);
    for (const result of unknown) {
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('storeapi: no store "nope"\n');
    }
  });

  test("--expires takes only its four choices, not a name every object has", async () => {
    const run = inDir(freshDir());
    await addShop(run);
    const result = await run(
      "keys",
      "create",
      "shop1",
      "--name",
      "x",
      "--orders",
      "read",
      "--expires",
      "toString",
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('storeapi: --expires takes never, 30d, 90d or 1y, not "toString"\n');
    expect((await run("keys", "list", "shop1", "--json")).json).toEqual([]);
  });
});

describe("command line", () => {
  test("unknown command, unknown flag, missing argument: exit 2, one line, no stack", async () => {
    const dir = freshDir();
    const results = await Promise.all([
      runCliInProcess(["frobnicate"]),
      runCliInProcess(["load"]),
      runCliInProcess(["load", join(dir, "x.json"), "--force"]),
      runCliInProcess(["serve", "--data", dir, "--listen", "nowhere"]),
      runCliInProcess(["serve", "--data", dir, "--port", "8080"]),
      runCliInProcess(["openapi", "extra"]),
    ]);
    for (const result of results) {
      expect(result.code).toBe(2);
      expect(isOneCleanLine(result.stderr)).toBe(true);
    }
    expect(results[0].stderr).toBe('storeapi: unknown command "frobnicate"; run storeapi --help\n');
  });

  test("what the operator typed is quoted in an error with its control characters as \\xHH", async () => {
    const typed = await runCliInProcess(["frob\u001b[2J"]);
    expect([typed.code, typed.stderr]).toEqual([
      2,
      'storeapi: unknown command "frob\\x1b[2J"; run storeapi --help\n',
    ]);
    const dir = join(freshDir(), "x\u001b[31mred\r");
    const data = await runCliInProcess(["stores", "list", "--data", dir]);
    expect(data.stderr).toBe(
      `storeapi: no data directory at ${dir.replace("\u001b", "\\x1b").replace("\r", "\\x0d")}; create one with storeapi stores add or storeapi load\n`,
    );
  });

  test("a name every object has (constructor, __proto__) is an unknown command too", async () => {
    for (const name of ["constructor", "__proto__", "toString"]) {
      const result = await runCliInProcess([name]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(`storeapi: unknown command "${name}"; run storeapi --help\n`);
    }
  });

  test("--help prints usage and exits 0; no command is one line on stderr and exit 2", async () => {
    const help = await runCliInProcess(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("keys create SLUG --name N");
    const noCommand = [2, "", "storeapi: no command given; run storeapi --help for the commands\n"];
    for (const argv of [[], ["--json"]]) {
      const none = await runCliInProcess(argv);
      expect([none.code, none.stdout, none.stderr]).toEqual(noCommand);
    }
  });

  test("help for one command: COMMAND --help, help COMMAND, and JSON with --json", async () => {
    const own = await runCliInProcess(["keys", "create", "--help"]);
    expect([own.code, own.stdout.split("\n")[0]]).toEqual([
      0,
      "Usage: storeapi keys create SLUG --name N [--products P] [--orders P] [--customers P] [--leads P] [--expires never/30d/90d/1y]",
    ]);
    const asked = await runCliInProcess(["help", "keys", "create"]);
    expect([asked.code, asked.stdout]).toEqual([0, own.stdout]);
    const json = await runCliInProcess(["keys", "create", "--help", "--json"]);
    expect([json.code, json.json]).toEqual([0, { help: own.stdout }]);
    // The common flags may stand anywhere, as for the command itself.
    for (const argv of [
      ["--json", "help", "keys", "create"],
      ["help", "--data", "somewhere", "keys", "create", "--json"],
    ]) {
      const moved = await runCliInProcess(argv);
      expect([argv, moved.code, moved.json]).toEqual([argv, 0, { help: own.stdout }]);
    }
    const group = await runCliInProcess(["keys", "--help"]);
    for (const argv of [
      ["help", "keys", "--json"],
      ["--json", "keys", "--help"],
    ]) {
      const groupJson = await runCliInProcess(argv);
      expect([argv, groupJson.code, groupJson.json]).toEqual([argv, 0, { help: group.stdout }]);
    }
    const overview = await runCliInProcess(["--help"]);
    expect((await runCliInProcess(["--help", "--json"])).json).toEqual({ help: overview.stdout });
  });

  test("-h or --help given as a flag's value or after -- is no call for help", async () => {
    const data = join(freshDir(), "data");
    const asName = await runCliInProcess([
      "keys",
      "create",
      "shop1",
      "--name",
      "-h",
      "--data",
      data,
    ]);
    expect([asName.code, asName.stdout, asName.stderr]).toEqual([
      2,
      "",
      'storeapi: --name needs a value (a value that starts with "-" is written --name=-h)\n',
    ]);
    const afterDashes = await runCliInProcess([
      "keys",
      "list",
      "shop1",
      "--data",
      data,
      "--",
      "--help",
    ]);
    expect([afterDashes.code, afterDashes.stderr]).toEqual([
      2,
      'storeapi: unexpected argument "--help"; usage: storeapi keys list SLUG\n',
    ]);
  });

  test("the common flags may come before the command: --data DIR --json stores list", async () => {
    const dir = freshDir();
    const data = join(dir, "data");
    await addShop(inDir(dir));
    const after = await runCliInProcess(["stores", "list", "--json", "--data", data]);
    const before = await runCliInProcess(["--data", data, "--json", "stores", "list"]);
    expect(before.code).toBe(0);
    expect(before.json.map((store: { slug: string }) => store.slug)).toEqual(["shop1"]);
    expect(before.json).toEqual(after.json);
    const inline = await runCliInProcess([`--data=${data}`, "--json", "keys", "list", "shop1"]);
    expect(inline.code).toBe(0);
    expect(inline.json).toEqual([]);
    // Between a group's two words too: `keys --json list`, `stores --data DIR list`.
    const between = await runCliInProcess(["stores", "--data", data, "--json", "list"]);
    expect([between.code, between.json]).toEqual([0, after.json]);
    const split = await runCliInProcess(["--json", "keys", `--data=${data}`, "list", "shop1"]);
    expect([split.code, split.json]).toEqual([0, []]);
    // Without a command (or a group's second word) they ask for one, like a bare `storeapi`.
    const none = await runCliInProcess(["--data", data]);
    expect([none.code, none.stderr]).toEqual([
      2,
      "storeapi: no command given; run storeapi --help for the commands\n",
    ]);
    const inherited = await runCliInProcess(["--constructor", "stores", "list"]);
    expect(inherited.stderr).toBe(
      'storeapi: unknown command "--constructor"; run storeapi --help\n',
    );
    const group = await runCliInProcess(["--data", data, "keys"]);
    expect(group.code).toBe(2);
    expect(group.stderr).toBe("storeapi: missing the keys command; use create, list or delete\n");
  });

  test("an empty flag value, argument or STOREAPI_DATA is bad usage, never the current directory", async () => {
    const flag = await runCliInProcess(["stores", "list", "--data", ""]);
    expect([flag.code, flag.stderr]).toEqual([2, "storeapi: --data needs a value\n"]);
    const data = join(freshDir(), "data");
    const dest = await runCliInProcess(["backup", "", "--data", data]);
    expect([dest.code, dest.stderr]).toEqual([
      2,
      "storeapi: DEST_DIR is empty; usage: storeapi backup DEST_DIR\n",
    ]);
    const mailDir = await runCli(["serve", "--data", data, "--mail-dir="]);
    expect([mailDir.code, mailDir.stderr]).toEqual([2, "storeapi: --mail-dir needs a value\n"]);
    const mailVariable = await runCli(["serve", "--data", data], {
      env: { STOREAPI_MAIL_DIR: "" },
    });
    expect([mailVariable.code, mailVariable.stderr]).toEqual([
      2,
      "storeapi: STOREAPI_MAIL_DIR is empty; give a value or leave it unset\n",
    ]);
    const notText = await runCli(["serve", "--data", data], {
      env: { STOREAPI_MAIL_FROM: "Sh\uFFFDop <a@b.org>" },
    });
    expect([notText.code, notText.stderr]).toEqual([
      2,
      "storeapi: STOREAPI_MAIL_FROM is not UTF-8 text (it holds bytes that are not, or U+FFFD)\n",
    ]);
    const variable = await runCli(["stores", "list"], { env: { STOREAPI_DATA: "" } });
    expect([variable.code, variable.stderr]).toEqual([
      2,
      "storeapi: STOREAPI_DATA is empty; give the data directory (default ./data)\n",
    ]);
    // Not UTF-8, it would name another directory (and serve would log that one). The bytes
    // themselves (bash's $'\xff': a test's own env can hold only text) under Deno, which
    // throws on reading such a variable, made an "unexpected failure".
    for (const name of ["STOREAPI_DATA", "STOREAPI_LIBSQL_URL"]) {
      const garbled = Bun.spawn(
        [
          "bash",
          "-c",
          `${name}=$'/tmp/e\\xff' exec "$@"`,
          "bash",
          ...storeapiCommand(),
          "stores",
          "list",
        ],
        { stdin: "ignore", stdout: "ignore", stderr: "pipe", timeout: 60_000 },
      );
      expect([await garbled.exited, await new Response(garbled.stderr).text()]).toEqual([
        2,
        `storeapi: ${name} is not UTF-8 text (it holds bytes that are not, or U+FFFD); give it in UTF-8\n`,
      ]);
    }
  });

  test("serve with --data before it keeps serving until SIGTERM", async () => {
    const dir = freshDir();
    const data = join(dir, "data");
    await addShop(inDir(dir));
    const libsql = await libsqlFlagsFor(["serve", "--data", data]);
    const { child, text } = await spawnUntil(
      ["--data", data, "serve", "--listen", "127.0.0.1:0", "--allow-http", ...libsql],
      '"listening"',
    );
    try {
      const { url } = JSON.parse(text.split("\n").find((l) => l.includes('"listening"')) ?? "{}");
      await Bun.sleep(300); // a command that is not serving would have exited by now
      expect(child.exitCode).toBeNull();
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await child.exited).toBe(0);
  });

  test("openapi prints a JSON document", async () => {
    const result = await runCliInProcess(["openapi"]);
    expect(result.code).toBe(0);
    expect(result.json.openapi).toMatch(/^3\.1/);
  });

  test("output that cannot be written is exit 1 and one line; a reader that stops early is no failure; a secret is not made for /dev/null", async () => {
    const dir = freshDir();
    expect(
      (await runCli(["load", writeFixture(dir, [testStore()]), "--data", join(dir, "data")])).code,
    ).toBe(0);
    const run = async (args: string[], stdout: number | "pipe") => {
      const command = [...args, "--data", join(dir, "data")];
      const child = Bun.spawn(
        [...storeapiCommand(), ...command, ...(await libsqlFlagsFor(command))],
        {
          stdin: "ignore",
          stdout,
          stderr: "pipe",
          timeout: 60_000,
        },
      );
      if (child.stdout instanceof ReadableStream) {
        const reader = child.stdout.getReader();
        await reader.read(); // the first chunk of the document, then this reader goes
        await reader.cancel();
      }
      return [await child.exited, await new Response(child.stderr).text()];
    };
    // /dev/full: every write fails as on a full disk ("> key.txt" must not exit 0 with an empty file)
    const full = openSync("/dev/full", "w");
    const DISK_FULL = "storeapi: cannot write the output: the disk is full";
    try {
      for (const args of [["openapi"], ["stores", "list", "--json"]])
        expect([args[0], ...(await run(args, full))]).toEqual([args[0], 1, `${DISK_FULL}\n`]);
      // A key whose secret was lost is made all the same: the line says which, and the fix.
      const keyLine = await run(
        ["keys", "create", "shop1", "--name", "lost", "--orders", "read"],
        full,
      );
      const hostKeyLine = await run(["host-keys", "create", "--name", "lost"], full);
      const keys = await runCli(["keys", "list", "shop1", "--json", "--data", join(dir, "data")]);
      const key = keys.json.find((k: { name: string }) => k.name === "lost");
      expect(keyLine).toEqual([
        1,
        `${DISK_FULL}; key ${key.id} of shop1 was created but its secret was not written: delete it (storeapi keys delete shop1 ${key.id}) and create another\n`,
      ]);
      const hostKeys = await runCli(["host-keys", "list", "--json", "--data", join(dir, "data")]);
      const hostKey = hostKeys.json.find((k: { name: string }) => k.name === "lost");
      expect(hostKeyLine).toEqual([
        1,
        `${DISK_FULL}; host key ${hostKey.id} was created but its secret was not written: delete it (storeapi host-keys delete ${hostKey.id}) and create another\n`,
      ]);
    } finally {
      closeSync(full);
    }
    expect(await run(["openapi"], "pipe")).toEqual([0, ""]);

    // A pipe whose reader is gone before anything is written (`| true`).
    const intoClosedPipe = async (command: string[]) => {
      const withData = [...command, "--data", join(dir, "data")];
      const args = [...withData, ...(await libsqlFlagsFor(withData))];
      const child = Bun.spawn(
        ["bash", "-c", 'set -o pipefail; "$@" | true', "bash", ...storeapiCommand(), ...args],
        { stdin: "ignore", stdout: "ignore", stderr: "pipe", timeout: 60_000 },
      );
      return [await child.exited, await new Response(child.stderr).text()];
    };
    const unreadLine = await intoClosedPipe([
      "keys",
      "create",
      "shop1",
      "--name",
      "unread",
      "--orders",
      "read",
    ]);
    const listed = await runCli(["keys", "list", "shop1", "--json", "--data", join(dir, "data")]);
    const unread = listed.json.find((k: { name: string }) => k.name === "unread");
    expect(unreadLine).toEqual([
      1,
      `storeapi: cannot write the output: its reader closed it first; key ${unread.id} of shop1 was created but its secret was not written: delete it (storeapi keys delete shop1 ${unread.id}) and create another\n`,
    ]);
    // A listing nobody reads is no failure.
    expect(await intoClosedPipe(["keys", "list", "shop1"])).toEqual([0, ""]);

    // stdout closed (`>&-`) or /dev/null: no write fails there (Bun and Deno put /dev/null
    // in place of a closed fd 1), so a secret would be lost with exit 0. Refused before
    // any key is made.
    const discarding = async (redirect: string, command: string[]) => {
      const withData = [...command, "--data", join(dir, "data")];
      const args = [...withData, ...(await libsqlFlagsFor(withData))];
      const child = Bun.spawn(
        ["bash", "-c", `"$@" ${redirect}`, "bash", ...storeapiCommand(), ...args],
        { stdin: "ignore", stdout: "ignore", stderr: "pipe", timeout: 60_000 },
      );
      return [await child.exited, await new Response(child.stderr).text()];
    };
    const keyCount = async () =>
      (await runCli(["keys", "list", "shop1", "--json", "--data", join(dir, "data")])).json.length;
    const hostKeyCount = async () =>
      (await runCli(["host-keys", "list", "--json", "--data", join(dir, "data")])).json.length;
    const [keysBefore, hostKeysBefore] = [await keyCount(), await hostKeyCount()];
    for (const redirect of [">&-", ">/dev/null"]) {
      expect(
        await discarding(redirect, [
          "keys",
          "create",
          "shop1",
          "--name",
          "gone",
          "--orders",
          "read",
        ]),
      ).toEqual([
        2,
        "storeapi: stdout is /dev/null (or closed), and the new key's secret is shown only once: send it to a file or a pipe\n",
      ]);
      expect(await discarding(redirect, ["host-keys", "create", "--name", "gone"])).toEqual([
        2,
        "storeapi: stdout is /dev/null (or closed), and the new host key's secret is shown only once: send it to a file or a pipe\n",
      ]);
    }
    expect([await keyCount(), await hostKeyCount()]).toEqual([keysBefore, hostKeysBefore]);
    // Output that is no secret may be thrown away.
    expect(await discarding(">&-", ["keys", "list", "shop1"])).toEqual([0, ""]);
  });
});

describe("load", () => {
  // --replace is refused on a libSQL server (README).
  test.skipIf(TEST_LIBSQL)(
    "loads a fixture, refuses an existing store without --replace, replaces with it",
    async () => {
      const dir = freshDir();
      const run = inDir(dir);
      const file = writeFixture(dir, [testStore({ slug: "alpha", domain: "alpha.example.com" })]);
      const first = await run("load", file, "--json");
      expect(first.code).toBe(0);
      expect(first.json.stores).toEqual([
        {
          slug: "alpha",
          domain: "alpha.example.com",
          plan: "growth",
          counts: { customers: 0, products: 0, orders: 0, leads: 0 },
        },
      ]);
      const again = await run("load", file);
      expect(again.code).toBe(1);
      expect(again.stderr).toBe(
        'storeapi: fixture refused, nothing loaded: stores[0].slug: store "alpha" already exists; pass --replace to load over it.\n',
      );
      const replaced = await run("load", file, "--replace");
      expect(replaced.code).toBe(0);
      expect((await run("keys", "list", "alpha", "--json")).json).toHaveLength(3);
    },
  );

  test("a store without orderStatuses gets the default ones; an empty list gives none", async () => {
    const dir = freshDir();
    const run = inDir(dir);
    const order = { number: 1001, status: 6, total: 10 };
    const { orderStatuses: _, ...store } = testStore({ orders: [order] });
    const file = join(dir, "fixture.json");
    writeFileSync(file, JSON.stringify({ stores: [store] }));
    expect((await run("load", file)).code).toBe(0);
    writeFileSync(
      file,
      JSON.stringify({
        stores: [{ ...store, slug: "bare", domain: "bare.test", orderStatuses: [] }],
      }),
    );
    const none = await run("load", file);
    expect([none.code, none.stderr]).toEqual([
      1,
      "storeapi: fixture refused, nothing loaded: stores[0].orders[0].status: status 6 must be an id in the store's orderStatuses (it has none).\n",
    ]);
  });

  test("a fixture file that cannot be read is named with the reason, in one line", async () => {
    const dir = freshDir();
    const run = inDir(dir);
    const missing = await run("load", join(dir, "missing.json"));
    expect([missing.code, missing.stderr]).toEqual([
      1,
      `storeapi: cannot read fixture file ${join(dir, "missing.json")}: no such file\n`,
    ]);
    const directory = await run("load", dir);
    expect([directory.code, directory.stderr]).toEqual([
      1,
      `storeapi: cannot read fixture file ${dir}: it is a directory\n`,
    ]);
    // A pipe would block the second read (and its open, without a writer).
    const pipe = join(dir, "fixture-pipe");
    expect(spawnSync("mkfifo", [pipe]).status).toBe(0);
    for (const path of [pipe, "/dev/null"]) {
      const notFile = await run("load", path);
      expect([notFile.code, notFile.stderr]).toEqual([
        1,
        `storeapi: cannot read fixture file ${path}: not a regular file; it is read twice, so save it to a file first\n`,
      ]);
    }
    const broken = join(dir, "broken.json");
    writeFileSync(broken, '{\n  "stores": [\n    {} x\n  ]\n}\n');
    const invalid = await run("load", broken);
    expect([invalid.code, invalid.stderr]).toEqual([
      1,
      `storeapi: ${broken} is not valid JSON: unexpected "x" on line 3\n`,
    ]);
    expect(existsSync(join(dir, "data"))).toBe(false);
  });

  test("a broken fixture is refused with the record's path and nothing is loaded", async () => {
    const dir = freshDir();
    const run = inDir(dir);
    const key = (i: number) => ({
      name: `k${i}`,
      secret: `svc_sk_cliTestKey${String(i).padStart(30, "0")}`,
    });
    const cases: Array<[unknown[], string]> = [
      [[testStore({ ownerEmail: "not an email" })], "stores[0].ownerEmail"],
      [[testStore({ keys: [1, 2, 3, 4, 5, 6].map(key) })], "stores[0].keys"],
      [[testStore(), testStore({ domain: "elsewhere.example.com" })], "stores[1].slug"],
      [[testStore(), testStore({ slug: "shop2" })], "stores[1].domain"],
      [
        [
          testStore({
            orderStatuses: [
              { id: 1, name: "New" },
              { id: 1, name: "Again" },
            ],
          }),
        ],
        "stores[0].orderStatuses[1].id",
      ],
      [
        [testStore({ keys: [{ name: "short", secret: "svc_sk_short" }] })],
        "stores[0].keys[0].secret",
      ],
      // Past 2^53 orders could never name it (it read back as another number).
      [
        [testStore({ orderStatuses: [{ id: 2 ** 53, name: "Far" }] })],
        "stores[0].orderStatuses[0].id",
      ],
      // One secret for two keys of a store: was a UNIQUE constraint failure.
      [[testStore({ keys: [key(1), key(1)] })], "stores[0].keys[1].secret"],
    ];
    for (const [i, [stores, path]] of cases.entries()) {
      // the first store of each case is valid on its own: only the whole file is refused
      const result = await run("load", writeFixture(dir, stores, `broken-${i}.json`));
      expect(result.code).toBe(1);
      expect(isOneCleanLine(result.stderr)).toBe(true);
      expect(result.stderr).toStartWith(`storeapi: fixture refused, nothing loaded: ${path}: `);
    }
    expect(existsSync(join(dir, "data"))).toBe(false); // not even the data directory
  });

  test("a missing file or invalid JSON is exit 1 with one line", async () => {
    const dir = freshDir();
    const run = inDir(dir);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{ not json");
    for (const result of [await run("load", join(dir, "missing.json")), await run("load", bad)]) {
      expect(result.code).toBe(1);
      expect(isOneCleanLine(result.stderr)).toBe(true);
    }
  });
});

const parses = (text: string) => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // not complete yet
  }
};

/** Starts `storeapi demo --json` on DATA and reads its intro (the whole JSON document). */
const startDemo = (data: string) =>
  spawnUntil(
    ["demo", "--json", "--listen", "127.0.0.1:0", "--data", data],
    (out) => parses(out) !== undefined,
  );

describe("demo", () => {
  test("loads the demo stores, prints them as --json, serves, and stops on SIGTERM with exit 0", async () => {
    const dir = freshDir();
    const { child, text } = await startDemo(join(dir, "demo"));
    const intro:
      | {
          url: string;
          stores: Array<{ slug: string; plan: string; keys: Array<{ secret?: string }> }>;
        }
      | undefined = parses(text);
    expect(intro).toBeDefined();
    if (!intro) return;
    expect(intro.stores.map((s) => s.plan)).toContain("free");
    const health = await fetch(`${intro.url}/healthz`);
    expect(await health.json()).toEqual({ ok: true, data: { status: "ok" } });
    const free = intro.stores.find((s) => s.plan === "free");
    const answer = await fetch(`${intro.url}/api/v1/products`, {
      headers: {
        Host: `${free?.slug}.localhost`,
        Authorization: `Bearer ${free?.keys[0]?.secret}`,
      },
    });
    expect(answer.status).toBe(403);
    expect((await answer.json()).error.code).toBe("plan_required");
    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
  });

  test("never empties a directory it did not make, nor one a running demo serves", async () => {
    const dir = freshDir();
    const own = join(dir, "project");
    mkdirSync(own);
    writeFileSync(join(own, "notes.txt"), "mine");
    const demo = (data: string) =>
      runCli(["demo", "--listen", "127.0.0.1:0", "--data", data], { timeoutMs: 20_000 });
    const refused = await demo(own);
    expect([refused.code, refused.stderr]).toEqual([
      1,
      `storeapi: ${own} holds files that the demo did not create; pick a new or empty --data for the demo\n`,
    ]);
    expect(readFileSync(join(own, "notes.txt"), "utf8")).toBe("mine");
    const file = await demo(join(own, "notes.txt"));
    expect(file.code).toBe(1);
    expect(file.stderr).toBe(
      `storeapi: ${join(own, "notes.txt")} is a file; give --data a directory\n`,
    );
    const empty = await demo("");
    expect([empty.code, empty.stderr]).toEqual([2, "storeapi: --data needs a value\n"]);

    const data = join(dir, "demo");
    const running = await startDemo(data);
    try {
      const { url } = JSON.parse(running.text);
      const second = await demo(data);
      expect([second.code, second.stderr]).toEqual([
        1,
        `storeapi: a demo is serving ${data}; stop it first, or pick another --data\n`,
      ]);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect(existsSync(join(data, "platform.db"))).toBe(true);
    } finally {
      running.child.kill("SIGTERM");
    }
    expect(await running.child.exited).toBe(0);
    // Stopped, its directory is the demo's to empty again.
    const again = await startDemo(data);
    again.child.kill("SIGTERM");
    expect(await again.child.exited).toBe(0);
    expect(JSON.parse(again.text).dataDir).toBe(data);
  });

  // The demo is files only; under the switch the store added first is on sqld.
  test.skipIf(TEST_LIBSQL)("refuses a data directory that the demo did not create", async () => {
    const dir = freshDir();
    const run = inDir(dir);
    await addShop(run);
    const result = await runCli(["demo", "--listen", "127.0.0.1:0", "--data", join(dir, "data")]);
    expect(result.code).toBe(1);
    expect(isOneCleanLine(result.stderr)).toBe(true);
    expect((await run("stores", "list", "--json")).json).toHaveLength(1);
  });
});

describe("load: orders", () => {
  test("an order with an unknown status id is refused with its path", async () => {
    const dir = freshDir();
    const run = inDir(dir);
    const orders = Array.from({ length: 20 }, (_, i) => ({
      number: 1001 + i,
      status: i === 12 ? 5 : 1,
      total: 10,
    }));
    const result = await run("load", writeFixture(dir, [testStore({ orders })]));
    expect(result.code).toBe(1);
    expect(isOneCleanLine(result.stderr)).toBe(true);
    expect(result.stderr).toStartWith(
      "storeapi: fixture refused, nothing loaded: stores[0].orders[12].status: ",
    );
    expect(result.stderr).toContain("1, 2, 3, 7");
    expect(existsSync(join(dir, "data"))).toBe(false);
  });

  // Reports the time on stderr; asserts none (the machine is shared).
  test("100,000 orders load, with progress lines on stderr", async () => {
    const dir = freshDir();
    const _run = inDir(dir);
    const start = Date.parse("2026-01-01T00:00:00+02:00");
    const orders = Array.from({ length: 100_000 }, (_, i) => ({
      number: 1001 + i,
      status: (i % 3) + 1,
      paid: i % 2 === 0,
      total: 59.9,
      customer: { name: "Noa Cohen", email: `c${i % 5000}@example.com` },
      items: [{ name: "Coffee 250 g", productId: 1, quantity: 1, price: 59.9 }],
      createdAt: new Date(start + i * 60_000).toISOString(),
    }));
    const file = writeFixture(
      dir,
      [testStore({ slug: "big", domain: "big.example.com", orders })],
      "big.json",
    );
    const started = performance.now();
    const result = await runCliInProcess(["load", file, "--json", "--data", join(dir, "data")]);
    const seconds = (performance.now() - started) / 1000;
    process.stderr.write(`[cli.test] 100,000 orders loaded in ${seconds.toFixed(1)} s\n`);
    expect(result.stderr).toContain("loading big orders: 100000/100000");
    const megabytes = Math.floor(statSync(file).size / 2 ** 20);
    expect(megabytes).toBeGreaterThanOrEqual(16); // the first read reports its progress too
    expect(result.stderr).toContain(`reading ${file} (MB): ${megabytes}/${megabytes}\n`);
    expect(result.code).toBe(0);
    expect(result.json.stores[0].counts.orders).toBe(100_000);
  }, 180_000);
});
