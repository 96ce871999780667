import { createHash, type Hash } from "node:crypto";
import { createReadStream, statSync } from "node:fs";
import { type JSONParserOptions, Tokenizer, TokenParser } from "@streamparser/json";
import { BoundsWatch, FixtureRefused } from "./bounds";
import { isSection, SECTION_NAMES, type SectionName } from "./section";

/**
 * Where a fixture comes from. A file is read twice and never held: once for its outline
 * (every store's own fields and the size of each record section), then record by record
 * while they are checked and written. A parsed object (the demo, the management API,
 * tests) is walked the same way.
 */

export { SECTION_NAMES, type SectionName } from "./section";

/** One record, where it sits in the fixture. */
export interface FixtureRecord {
  store: number;
  section: SectionName;
  index: number;
  value: unknown;
}

/** A record section before its records are read: how many, and the largest id one names. */
export interface SectionOutline {
  count: number;
  maxId: number;
}

export interface FixtureOutline {
  /** The fixture with each store's record arrays emptied; anything else left for the checks. */
  fixture: unknown;
  /** Per store index (a store that is not an object has none). */
  sections: Map<number, Record<SectionName, SectionOutline>>;
}

export interface FixtureSource {
  outline(): Promise<FixtureOutline>;
  /** Every record in fixture order: a store's records all come before the next store's. */
  records(): AsyncIterable<FixtureRecord>;
}

/** A file that is not a JSON document, could not be read, or changed while it was read; the message follows its name. */
export class UnreadableFixture extends Error {}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The id a raw record names, when it is one an id could be (the checks refuse the rest). */
const idOf = (record: unknown): number => {
  const id = isObject(record) ? record.id : undefined;
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? id : 0;
};

function emptyOutline(): Record<SectionName, SectionOutline> {
  return {
    customers: { count: 0, maxId: 0 },
    products: { count: 0, maxId: 0 },
    orders: { count: 0, maxId: 0 },
    leads: { count: 0, maxId: 0 },
  };
}

class OutlineBuilder {
  readonly sections = new Map<number, Record<SectionName, SectionOutline>>();

  add(store: number, section: SectionName, record: unknown): void {
    let outline = this.sections.get(store);
    if (!outline) {
      outline = emptyOutline();
      this.sections.set(store, outline);
    }
    outline[section].count++;
    outline[section].maxId = Math.max(outline[section].maxId, idOf(record));
  }
}

const storesOf = (fixture: unknown): unknown[] =>
  isObject(fixture) && Array.isArray(fixture.stores) ? fixture.stores : [];

const recordsOf = (store: unknown, section: SectionName): unknown[] | null =>
  isObject(store) && Array.isArray(store[section]) ? store[section] : null;

/** A parsed fixture's outline. */
export function outlineObject(fixture: unknown): FixtureOutline {
  const builder = new OutlineBuilder();
  const outlined = storesOf(fixture).map((store, i) => {
    if (!isObject(store)) return store;
    builder.sections.set(i, emptyOutline());
    const copy = { ...store };
    for (const section of SECTION_NAMES) {
      const records = recordsOf(store, section);
      if (!records) continue;
      for (const record of records) builder.add(i, section, record);
      copy[section] = [];
    }
    return copy;
  });
  const whole = isObject(fixture) && Array.isArray(fixture.stores);
  return {
    fixture: whole ? { ...fixture, stores: outlined } : fixture,
    sections: builder.sections,
  };
}

/** A parsed fixture's records, in fixture order. */
export function* objectRecords(fixture: unknown): Generator<FixtureRecord> {
  for (const [store, raw] of storesOf(fixture).entries()) {
    for (const section of SECTION_NAMES) {
      const records = recordsOf(raw, section) ?? [];
      for (const [index, value] of records.entries()) yield { store, section, index, value };
    }
  }
}

/** A fixture already parsed. */
export function objectSource(fixture: unknown): FixtureSource {
  return {
    outline: async () => outlineObject(fixture),
    async *records() {
      yield* objectRecords(fixture);
    },
  };
}

/** The parser's frames above a value; above a record their keys are [, "stores", store, section]. */
type Frame = { key?: unknown; value?: unknown };

/** The store and section of a value the parser emitted at `$.stores.*.{section}.*`, if it is a record. */
function recordPlace(
  stack: Frame[],
  parent: unknown,
): { store: number; section: SectionName } | null {
  const store = stack[2]?.key;
  const section = stack[3]?.key;
  if (typeof store !== "number" || !isSection(section)) return null;
  if (!Array.isArray(stack[2]?.value) || !Array.isArray(parent)) return null; // refused by the checks
  return { store, section };
}

const RECORD_PATHS = SECTION_NAMES.map((section) => `$.stores.*.${section}.*`);
const CHUNK_BYTES = 1 << 20;

/** A streaming parser (what `JSONParser` wires up) whose tokens a `BoundsWatch` sees first. */
function boundedParser(options: JSONParserOptions) {
  const tokenizer = new Tokenizer(options);
  const parser = new TokenParser(options);
  const watch = new BoundsWatch();
  tokenizer.onToken = (token) => {
    watch.see(token);
    parser.write(token);
  };
  tokenizer.onEnd = () => parser.isEnded || parser.end();
  parser.onError = tokenizer.error.bind(tokenizer);
  parser.onEnd = () => tokenizer.isEnded || tokenizer.end();
  return { tokenizer, parser, watch };
}

type BoundedParser = ReturnType<typeof boundedParser>;

/**
 * Feeds a file to a streaming parser chunk by chunk and yields, after each chunk, what
 * the parser emitted: at most a chunk's records wait in memory.
 */
async function* parsed<T>(
  path: string,
  { tokenizer, watch }: BoundedParser,
  emitted: T[],
  content: Hash,
  onRead?: (bytes: number) => void,
): AsyncGenerator<T[]> {
  let bytes = 0;
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES })) {
      content.update(chunk as Uint8Array);
      tokenizer.write(chunk as Uint8Array);
      bytes += (chunk as Uint8Array).length;
      watch.read(bytes);
      onRead?.(bytes);
      if (emitted.length) yield emitted.splice(0);
    }
    if (!tokenizer.isEnded) tokenizer.end();
  } catch (error) {
    throw await unreadable(path, error);
  }
  if (emitted.length) yield emitted.splice(0);
}

/** A failed read of the file in the operator's terms, with the line where it applies. */
async function unreadable(path: string, error: unknown): Promise<UnreadableFixture> {
  if (error instanceof FixtureRefused) {
    const { found, advice, offset } = error;
    return new UnreadableFixture(`holds ${found} (line ${await lineAt(path, offset)}); ${advice}`);
  }
  const { code, message } = error as NodeJS.ErrnoException;
  // The tokenizer decodes strings with a fatal TextDecoder.
  if (code === "ERR_ENCODING_INVALID_ENCODED_DATA")
    return new UnreadableFixture("is not UTF-8 text: save it as UTF-8, as JSON is");
  if (code) return new UnreadableFixture(`could not be read: ${message}`);
  return new UnreadableFixture(`is not valid JSON: ${await invalidJsonReason(path, message)}`);
}

/** How much of a token the parser could not place an error names. */
const SHOWN_TOKEN_CHARS = 40;

/**
 * The parser's reason in an operator's terms: what it met and on which line (it counts
 * bytes; the file is read again up to there to count lines, only on this error path).
 */
async function invalidJsonReason(path: string, message: string): Promise<string> {
  const char = /^Unexpected "(.*)" at chunk position "\d+" \(absolute position "(\d+)"\)/s.exec(
    message,
  );
  if (char)
    return `unexpected ${JSON.stringify(char[1])} on line ${await lineAt(path, Number(char[2]))}`;
  const token = /^Unexpected (\w+) \((.*)\) in state/s.exec(message);
  if (token) {
    const kind = token[1].toLowerCase().replaceAll("_", " ");
    return `unexpected ${kind} ${token[2].slice(0, SHOWN_TOKEN_CHARS)}`;
  }
  if (message.startsWith("Parser ended in mid-parsing"))
    return "the file ends inside the document (was it cut short?)";
  return message.slice(0, 200);
}

/** The 1-based line of a byte offset in the file. */
async function lineAt(path: string, offset: number): Promise<number> {
  let line = 1;
  if (offset === 0) return line;
  for await (const chunk of createReadStream(path, {
    end: offset - 1,
    highWaterMark: CHUNK_BYTES,
  })) {
    const bytes = chunk as Uint8Array;
    for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) line++;
  }
  return line;
}

/** A fixture file, read as a stream; `onRead(bytes, total)` reports the outline's progress. */
export function fileSource(
  path: string,
  onRead?: (bytes: number, total: number) => void,
): FixtureSource {
  /** The outline's read of the file: the records' read must find the same bytes. */
  let outlined: string | undefined;
  return {
    async outline() {
      const total = statSync(path).size;
      const builder = new OutlineBuilder();
      const roots: unknown[] = [];
      const bounded = boundedParser({ paths: ["$", ...RECORD_PATHS], keepStack: false });
      bounded.parser.onValue = ({ value, parent, stack }) => {
        if (stack.length === 0) roots.push(value);
        const place = recordPlace(stack, parent);
        if (!place) return;
        builder.add(place.store, place.section, value);
        (parent as unknown[]).length -= 1; // counted; the outline keeps no record
      };
      const reporting = onRead && ((bytes: number) => onRead(bytes, total));
      const content = createHash("sha256");
      for await (const _ of parsed(path, bounded, [], content, reporting));
      outlined = content.digest("hex");
      const [fixture] = roots;
      if (fixture === undefined)
        throw new UnreadableFixture("is empty: a fixture is a JSON object");
      for (const [i, store] of storesOf(fixture).entries()) {
        if (isObject(store) && !builder.sections.has(i)) builder.sections.set(i, emptyOutline());
      }
      return { fixture, sections: builder.sections };
    },
    async *records() {
      const bounded = boundedParser({ paths: RECORD_PATHS, keepStack: false });
      const emitted: FixtureRecord[] = [];
      bounded.parser.onValue = ({ value, key, parent, stack }) => {
        const place = recordPlace(stack, parent);
        if (place) emitted.push({ ...place, index: key as number, value });
      };
      const content = createHash("sha256");
      for await (const records of parsed(path, bounded, emitted, content)) yield* records;
      if (outlined !== undefined && content.digest("hex") !== outlined)
        throw new UnreadableFixture("changed while it was being loaded; nothing was loaded");
    },
  };
}
