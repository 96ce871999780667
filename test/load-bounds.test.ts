import { describe, expect, test } from "bun:test";
import { Tokenizer } from "@streamparser/json";
import { BoundsWatch, type FixtureBounds, FixtureRefused, shownKey } from "../src/load/bounds";

const SMALL: FixtureBounds = { valueBytes: 10, recordBytes: 40, outlineBytes: 70 };

/** Tokenizes `text` in one write under `bounds`: what it was refused for, or null. */
function refusal(text: string, bounds = SMALL): Pick<FixtureRefused, "found" | "offset"> | null {
  const tokenizer = new Tokenizer();
  const watch = new BoundsWatch(bounds);
  tokenizer.onToken = (token) => watch.see(token);
  try {
    tokenizer.write(text);
    watch.read(Buffer.byteLength(text));
    return null;
  } catch (error) {
    if (!(error instanceof FixtureRefused)) throw error;
    return { found: error.found, offset: error.offset };
  }
}

describe("a fixture's bounds", () => {
  test("a value may take up to valueBytes from its first byte to the next token's", () => {
    expect(refusal('{"stores":[{"name":"12345678"}]}')).toBeNull();
    expect(refusal('{"stores":[{"name":"123456789"}]}')).toEqual({
      found: "a value over 10 bytes at stores[0].name",
      offset: 19,
    });
  });

  test("a key given twice in one object is refused where the second starts, at any depth", () => {
    const LARGE = { valueBytes: 1000, recordBytes: 1000, outlineBytes: 1000 };
    expect(refusal('{"stores":[],"stores":[]}', LARGE)).toEqual({
      found: "the key stores twice at the top",
      offset: 13,
    });
    expect(refusal('{"stores":[{"orders":[],"orders":[]}]}', LARGE)?.found).toBe(
      "the key orders twice at stores[0]",
    );
    expect(refusal('{"stores":[{"orders":[{"id":1,"id":2}]}]}', LARGE)?.found).toBe(
      "the key id twice at stores[0].orders[0]",
    );
    // The same key in sibling objects, or as a value, is no repeat.
    expect(refusal('{"stores":[{"slug":"a"},{"slug":"slug"}]}', LARGE)).toBeNull();
  });

  test("a value still being read counts at the end of what was read", () => {
    expect(refusal('{"stores":[{"name":"123456789')?.found).toEndWith(" at stores[0].name");
    expect(refusal('{"stores":[{"name":"12345678')).toBeNull();
  });

  test("paths name array elements, and quote and cut keys that are not plain names", () => {
    expect(refusal('{"stores":[{},{"orders":[1,{"items":[0,0,"123456789"]}]}]}')?.found).toEndWith(
      " at stores[1].orders[1].items[2]",
    );
    expect(refusal('{"a b":"123456789"}')?.found).toEndWith(' at "a b"');
    expect(refusal('"123456789"')?.found).toEndWith(" at the top");
    expect(refusal('{"stores":[{"slug":"a","123456789')?.found).toEndWith(" at stores[0]");
  });

  test("a record is a customer, product, order or lead of a store; it may take recordBytes", () => {
    const items = '"items":[1,2,3,4,5,6,7,8,9,0,1,2]';
    expect(items.length).toBe(33);
    expect(refusal(`{"stores":[{"orders":[{${items}},{${items}}]}]}`)).toBeNull();
    expect(refusal(`{"stores":[{"orders":[{${items},"a":12}]}]}`)).toEqual({
      found: "a record over 40 bytes at stores[0].orders[0]",
      offset: 22,
    });
    // Not under a record section: the same array is the stores' own data.
    expect(refusal(`{"stores":[{"keys":[{${items},"a":12}]}]}`)?.found).toBeUndefined();
  });

  test("everything but records may take outlineBytes, however many records lie between", () => {
    const store = '{"slug":"a","orders":[{"items":[1,2,3,4,5,6,7,8,9,0]}]}';
    expect(refusal(`{"stores":[${store},${store}]}`)).toBeNull();
    const outline = refusal(`{"stores":[${store},${store},${store}]}`);
    expect(outline?.found).toBe("over 70 bytes besides its customers, products, orders and leads");
    expect(refusal(`{"stores":[],"notes":[${'"12345",'.repeat(8)}""]}`)?.found).toStartWith(
      "over ",
    );
  });

  test("shown keys", () => {
    expect(shownKey("orders")).toBe("orders");
    expect(shownKey("x-y")).toBe('"x-y"');
    expect(shownKey("k".repeat(41))).toBe(`${"k".repeat(40)}…`);
    expect(shownKey("\u001b[31m")).toBe('"\\u001b[31m"');
  });
});
