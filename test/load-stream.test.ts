import { describe, expect, test } from "bun:test";
import {
  appendFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { openDb } from "../src/db/open";
import { loadFixture, loadSource } from "../src/load/load";
import {
  type FixtureRecord,
  type FixtureSource,
  fileSource,
  objectSource,
  UnreadableFixture,
} from "../src/load/source";
import { scratchDirs, testStore } from "./helpers";
import { storeapiCommand } from "./process";

const freshDir = scratchDirs("storeapi-load-stream-");

function writeJson(text: string): string {
  const path = join(freshDir(), "fixture.json");
  writeFileSync(path, text);
  return path;
}

async function recordsOf(source: FixtureSource): Promise<FixtureRecord[]> {
  const records: FixtureRecord[] = [];
  for await (const record of source.records()) records.push(record);
  return records;
}

/** Records before the statuses they name, sections interleaved, an id-less record before one with an id. */
const FIXTURE = {
  stores: [
    {
      orders: [
        { number: 1001, status: 2, total: 10 },
        { id: 9, number: 1002, status: 1, total: 20 },
      ],
      ...testStore({ slug: "a", domain: "a.example.com" }),
      leads: [{ name: "Dana" }],
      products: [
        { id: 3, name: "Tea", price: 5 },
        { name: "Cup", price: 7 },
      ],
    },
    { ...testStore({ slug: "b", domain: "b.example.com" }), customers: [] },
  ],
};

describe("a fixture file read as a stream", () => {
  test("outlines and yields exactly what the parsed fixture does", async () => {
    const path = writeJson(JSON.stringify(FIXTURE, null, 2));
    const fromFile = fileSource(path);
    const fromObject = objectSource(FIXTURE);
    const outline = await fromFile.outline();
    expect(outline).toEqual(await fromObject.outline());
    expect(outline.sections.get(0)).toEqual({
      customers: { count: 0, maxId: 0 },
      products: { count: 2, maxId: 3 },
      orders: { count: 2, maxId: 9 },
      leads: { count: 1, maxId: 0 },
    });
    expect((outline.fixture as { stores: Array<{ orders: unknown }> }).stores[0].orders).toEqual(
      [],
    );
    const fileRecords = await recordsOf(fromFile);
    // A file yields records in its own key order; a parsed fixture section by section.
    const bySection = (records: FixtureRecord[]) =>
      [...records].sort((x, y) => x.section.localeCompare(y.section) || x.index - y.index);
    expect(bySection(fileRecords)).toEqual(bySection(await recordsOf(fromObject)));
    expect(fileRecords.map((r) => `${r.store}.${r.section}[${r.index}]`)).toEqual([
      "0.orders[0]",
      "0.orders[1]",
      "0.leads[0]",
      "0.products[0]",
      "0.products[1]",
    ]);
  });

  test("keeps a record section that is not an array in the outline, for the checks to refuse", async () => {
    const fixture = { stores: [{ ...testStore(), orders: { first: { number: 1 } } }] };
    const outline = await fileSource(writeJson(JSON.stringify(fixture))).outline();
    expect((outline.fixture as typeof fixture).stores[0].orders).toEqual({ first: { number: 1 } });
    expect(await recordsOf(fileSource(writeJson(JSON.stringify(fixture))))).toEqual([]);
  });

  test("a file that is not one JSON document is refused with what is wrong and where", async () => {
    const cases: Array<[string, string]> = [
      ['{ "stores": [', "is not valid JSON: the file ends inside the document (was it cut short?)"],
      ['{ "stores": [] } x', 'is not valid JSON: unexpected "x" on line 1'],
      ['{ "stores": [] }{}', 'is not valid JSON: unexpected "{" on line 1'],
      [
        '{\n  "stores": [\n    { "name": "é" },\n    { "name" "x" }\n  ]\n}',
        'is not valid JSON: unexpected string "x"',
      ],
      [
        '{\n  "stores": [\n    { "name": "é" },\n    { "name": tru }\n  ]\n}',
        'is not valid JSON: unexpected " " on line 4',
      ],
      ["\n\n\u0000", 'is not valid JSON: unexpected "\\u0000" on line 3'],
      ["  \n", "is empty: a fixture is a JSON object"],
      // Last-wins would keep one array's store fields and both arrays' records.
      [
        '{"stores": [],\n "stores": []}',
        "holds the key stores twice at the top (line 2); write each key once in an object",
      ],
    ];
    for (const [text, message] of cases) {
      const error = await fileSource(writeJson(text))
        .outline()
        .catch((e) => e);
      expect(error).toBeInstanceOf(UnreadableFixture);
      expect((error as Error).message).toBe(message);
    }
  });

  test("a file that is not UTF-8 says so", async () => {
    const path = writeJson("");
    writeFileSync(path, Buffer.from('{"stores":[{"name":"caf\xe9"}]}', "latin1"));
    const error = await fileSource(path)
      .outline()
      .catch((e) => e);
    expect((error as Error).message).toBe("is not UTF-8 text: save it as UTF-8, as JSON is");
  });

  test("a file changed between its two reads is refused", async () => {
    const path = writeJson(JSON.stringify(FIXTURE));
    const source = fileSource(path);
    await source.outline();
    appendFileSync(path, "\n");
    const error = await recordsOf(source).catch((e) => e);
    expect(error).toBeInstanceOf(UnreadableFixture);
    expect((error as Error).message).toBe("changed while it was being loaded; nothing was loaded");
  });

  test("so is one changed in place to the same size, its time put back", async () => {
    const text = JSON.stringify(FIXTURE);
    const path = writeJson(text);
    const time = new Date("2026-11-01T10:00:00Z");
    utimesSync(path, time, time);
    const source = fileSource(path);
    await source.outline();
    writeFileSync(path, text.replace('"total":20', '"total":90'));
    utimesSync(path, time, time);
    expect(statSync(path).size).toBe(text.length);
    const error = await recordsOf(source).catch((e) => e);
    expect((error as Error).message).toBe("changed while it was being loaded; nothing was loaded");
  });

  test("loads the same rows, with the same ids, as the parsed fixture", async () => {
    const path = writeJson(JSON.stringify(FIXTURE));
    const [fromFile, fromObject] = [join(freshDir(), "data"), join(freshDir(), "data")];
    const now = Date.parse("2026-11-01T00:00:00Z");
    const summary = await loadSource(fromFile, fileSource(path), { now });
    expect(summary).toEqual(await loadFixture(fromObject, FIXTURE, { now }));
    const rows = async (dataDir: string) => {
      const db = await openDb(`file:${join(dataDir, "stores", "a.db")}`, []);
      try {
        return {
          orders: await db.all("SELECT id, number, status_id FROM orders ORDER BY id"),
          products: await db.all("SELECT id, name FROM products ORDER BY id"),
          leads: await db.all("SELECT id, name FROM leads ORDER BY id"),
        };
      } finally {
        await db.close();
      }
    };
    const loaded = await rows(fromFile);
    expect(loaded).toEqual(await rows(fromObject));
    expect(loaded.orders.map((o) => ({ ...o }))).toEqual([
      { id: 9, number: 1002, status_id: 1 },
      { id: 10, number: 1001, status_id: 2 },
    ]);
    expect(loaded.products.map((p) => ({ ...p }))).toEqual([
      { id: 3, name: "Tea" },
      { id: 4, name: "Cup" },
    ]);
  });

  test("a broken record far into the file leaves no data directory behind", async () => {
    const orders = Array.from({ length: 3000 }, (_, i) => ({
      number: 1001 + i,
      status: i === 2999 ? 99 : 1,
      total: 10,
    }));
    const path = writeJson(JSON.stringify({ stores: [testStore({ orders })] }));
    const dataDir = join(freshDir(), "data");
    const error = await loadSource(dataDir, fileSource(path)).catch((e) => e);
    expect((error as Error).message).toStartWith(
      "stores[0].orders[2999].status: status 99 must be",
    );
    expect(existsSync(dataDir)).toBe(false);
  });
});

/** The process's peak resident memory so far (Linux), in bytes. */
function peakRss(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0; // it has exited
  }
}

/** How many files the process holds open now (Linux). */
function openDescriptors(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0; // it has exited
  }
}

/** A command as its own process, with its peak resident memory and most files open at once. */
async function measured(args: string[]) {
  const proc = Bun.spawn([...storeapiCommand(), ...args], { stdout: "pipe", stderr: "pipe" });
  let peak = 0;
  let peakFiles = 0;
  const watch = setInterval(() => {
    peak = Math.max(peak, peakRss(proc.pid));
    peakFiles = Math.max(peakFiles, openDescriptors(proc.pid));
  }, 25);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearInterval(watch);
  return { stdout, stderr, code, peak, peakFiles };
}

/** `storeapi load PATH --json` as its own process, and its peak resident memory. */
const loadMeasured = (path: string, dataDir: string) =>
  measured(["load", path, "--json", "--data", dataDir]);

// 4,000 small stores: load held 752 MB and backup 1.1 GB, each closed store's files and
// memory kept until a collection that a command's loop never gave a turn to run.
test("many small stores: load and backup say how many are done and give each store's files back", async () => {
  const dir = freshDir();
  const path = join(dir, "many.json");
  const stores = Array.from({ length: 300 }, (_, i) =>
    testStore({ slug: `s${i}`, domain: `s${i}.test`, ownerEmail: `owner@s${i}.test`, keys: [] }),
  );
  writeFileSync(path, JSON.stringify({ stores }));
  const data = join(dir, "data");
  const loaded = await measured(["load", path, "--data", data]);
  expect(loaded.code).toBe(0);
  expect(loaded.stderr.split("\n").at(-2)).toBe("loading stores: 300/300");
  const copied = await measured(["backup", join(dir, "copy"), "--data", data]);
  expect(copied.code).toBe(0);
  expect(copied.stderr.split("\n").at(-2)).toBe("backup: stores copied: 300/300");
  // Three files per store until collected: 900 and more when every store's are kept.
  expect([loaded.peakFiles, copied.peakFiles].map((n) => n < 400)).toEqual([true, true]);
}, 120_000);

describe("load of a big file", () => {
  // Reading the whole file took ~16 times its size (a 47 MB file: 790 MB, 2026-11-26).
  test("holds a record at a time: peak memory under 450 MB for a 42 MB file", async () => {
    const dir = freshDir();
    const path = join(dir, "big.json");
    const orders = Array.from({ length: 120_000 }, (_, i) =>
      JSON.stringify({
        number: 1001 + i,
        status: (i % 3) + 1,
        total: 59.9,
        customer: { name: "Noa Cohen", email: `c${i % 5000}@example.com`, address: "Herzl 1" },
        customerNotes: "Please leave at the door, thank you very much",
        items: [
          { name: "Coffee 250 g", sku: "C-250", productId: 1, quantity: 1, price: 59.9 },
          { name: "Tea", productId: 2, quantity: 2, price: 10 },
        ],
        createdAt: "2026-01-01T10:00:00+02:00",
      }),
    );
    const store = JSON.stringify(testStore({ slug: "big", domain: "big.example.com" }));
    writeFileSync(path, `{"stores":[${store.slice(0, -1)},"orders":[${orders.join(",")}]}]}`);
    const size = readFileSync(path).length;
    expect(size).toBeGreaterThan(40 * 1024 * 1024);
    const { stdout, code, peak } = await loadMeasured(path, join(dir, "data"));
    expect(code).toBe(0);
    expect(JSON.parse(stdout).stores[0].counts.orders).toBe(120_000);
    process.stderr.write(
      `[load-stream] ${(size / 2 ** 20).toFixed(0)} MB file: peak ${(peak / 2 ** 20).toFixed(0)} MB\n`,
    );
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(450 * 1024 * 1024);
  }, 180_000);

  // Each held the whole value, record or store list first: a 476 MB name took 1.5 GB,
  // a 190 MB array beside "stores" 2.5 GB before its key was refused (2026-11-26).
  const MiB = 1024 * 1024;
  const store = JSON.stringify(testStore({ slug: "big", domain: "big.example.com" })).slice(0, -1);
  const refusals = [
    {
      what: "a value",
      text: `{"stores":[${store},\n"customers":[{"name":"${"x".repeat(MiB + 1)}"}]}]}`,
      message:
        "holds a value over 1 MiB at stores[0].customers[0].name (line 2); no field takes one that long",
    },
    {
      what: "a record",
      text: `{"stores":[${store},"orders":[{"total":1},\n{"items":[${'{"name":"Tea","productId":2,"quantity":2,"price":10},'.repeat(170_000)}{}]}]}]}`,
      message:
        "holds a record over 8 MiB at stores[0].orders[1] (line 2); no store's record is that large",
    },
    {
      what: "the stores without their records",
      text: `{"stores":[${store}}],\n"notes":[${`"${"n".repeat(1000)}",`.repeat(34_000)}""]}`,
      message:
        "holds over 32 MiB besides its customers, products, orders and leads (line 2); load its stores from several files",
    },
  ];
  for (const { what, text, message } of refusals) {
    test(`${what} past its bound is refused as soon as it is, in one line, and nothing is loaded`, async () => {
      const dir = freshDir();
      const path = join(dir, "big.json");
      writeFileSync(path, text);
      const { stderr, code, peak } = await loadMeasured(path, join(dir, "data"));
      expect(code).toBe(1);
      expect(stderr.split("\n").slice(-2)).toEqual([`storeapi: ${path} ${message}`, ""]);
      expect(existsSync(join(dir, "data"))).toBe(false);
      expect(peak).toBeLessThan(450 * MiB);
    }, 120_000);
  }
});
