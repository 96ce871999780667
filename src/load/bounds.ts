import { type ParsedTokenInfo, TokenType } from "@streamparser/json";
import { isSection } from "./section";

/**
 * How much of a fixture file a parser may hold at once. Each is far above what a real
 * fixture needs; past it the file is a mistake, and holding it would take memory without
 * bound (the parser's objects take ~10× the bytes they come from).
 */
export interface FixtureBounds {
  /** One string or number, or blank space: the longest field takes 5,000 characters. */
  valueBytes: number;
  /** One customer, product, order or lead: an order of tens of thousands of items. */
  recordBytes: number;
  /** Everything but the records (every store's own fields, keys and statuses), held until it is checked. */
  outlineBytes: number;
}

export const FIXTURE_BOUNDS: FixtureBounds = {
  valueBytes: 1 << 20,
  recordBytes: 8 << 20,
  outlineBytes: 32 << 20,
};

/** A fixture past one of its bounds, or with a key repeated, noticed at byte `offset` (for its line). */
export class FixtureRefused extends Error {
  constructor(
    /** What it holds: "a value over 1 MiB at stores[0].name", "the key stores twice at the top". */
    readonly found: string,
    /** What to do about it, or why it cannot be. */
    readonly advice: string,
    readonly offset: number,
  ) {
    super(`holds ${found}; ${advice}`);
  }
}

/** An object or array the tokens are in, and the key or index of the value being read in it. */
interface Frame {
  array: boolean;
  key: string | number | undefined;
  awaitingKey: boolean;
  /** An object's keys so far: one given twice is refused (a parser would keep both arrays' records, or the last value). */
  keys?: Set<string>;
}

const MiB = 1 << 20;
const sizeText = (bytes: number) => (bytes % MiB ? `${bytes} bytes` : `${bytes / MiB} MiB`);
const SHOWN_KEY_CHARS = 40;

/** A key as a path shows it: cut, and quoted unless it is a plain name. */
export function shownKey(key: string): string {
  const cut = key.length > SHOWN_KEY_CHARS ? `${key.slice(0, SHOWN_KEY_CHARS)}…` : key;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? cut : JSON.stringify(cut);
}

/**
 * Watches the tokens of one file as the tokenizer emits them (before the parser builds
 * values from them) and refuses the file once a value, a record or the rest outgrows
 * its bound. Offsets are the file's bytes.
 */
export class BoundsWatch {
  private readonly frames: Frame[] = [];
  /** Where the last token started. */
  private last = 0;
  /** Where the record being read started, or -1 outside records. */
  private recordStart = -1;
  private outlineBytes = 0;

  constructor(private readonly bounds: FixtureBounds = FIXTURE_BOUNDS) {}

  /** Called with every token, in order. */
  see({ token, value, offset }: ParsedTokenInfo): void {
    this.check(offset);
    if (this.recordStart < 0) this.outlineBytes += offset - this.last;
    this.last = offset;
    const top = this.frames.at(-1);
    switch (token) {
      case TokenType.LEFT_BRACE:
      case TokenType.LEFT_BRACKET: {
        const array = token === TokenType.LEFT_BRACKET;
        this.frames.push(
          array
            ? { array, key: 0, awaitingKey: false }
            : { array, key: undefined, awaitingKey: true, keys: new Set() },
        );
        if (this.recordStart < 0 && this.inRecord()) this.recordStart = offset;
        break;
      }
      case TokenType.RIGHT_BRACE:
      case TokenType.RIGHT_BRACKET:
        this.frames.pop();
        if (!this.inRecord()) this.recordStart = -1;
        break;
      case TokenType.COMMA:
        if (top?.array) top.key = (top.key as number) + 1;
        else if (top) top.awaitingKey = true;
        break;
      case TokenType.STRING:
        if (top && !top.array && top.awaitingKey) {
          this.refuseRepeated(top, value as string, offset);
          top.key = value as string;
          top.awaitingKey = false;
        }
        break;
    }
  }

  private refuseRepeated(object: Frame, key: string, offset: number): void {
    if (object.keys?.has(key))
      throw new FixtureRefused(
        `the key ${shownKey(key)} twice at ${this.path()}`,
        "write each key once in an object",
        offset,
      );
    object.keys?.add(key);
  }

  /** Called once `read` bytes have been given to the tokenizer: a value still being read counts too. */
  read(read: number): void {
    this.check(read);
  }

  private check(at: number): void {
    const { valueBytes, recordBytes, outlineBytes } = this.bounds;
    if (at - this.last > valueBytes)
      throw new FixtureRefused(
        `a value over ${sizeText(valueBytes)} at ${this.path()}`,
        "no field takes one that long",
        this.last,
      );
    if (this.recordStart >= 0 && at - this.recordStart > recordBytes)
      throw new FixtureRefused(
        `a record over ${sizeText(recordBytes)} at ${this.path(4)}`,
        "no store's record is that large",
        this.recordStart,
      );
    const outline = this.outlineBytes + (this.recordStart < 0 ? at - this.last : 0);
    if (outline > outlineBytes)
      throw new FixtureRefused(
        `over ${sizeText(outlineBytes)} besides its customers, products, orders and leads`,
        "load its stores from several files",
        at,
      );
  }

  /** Inside `$.stores[i].{section}[j]`: the frames of the root, `stores`, a store and a section, and more. */
  private inRecord(): boolean {
    const [root, stores, store, section] = this.frames;
    return (
      this.frames.length > 4 &&
      !root.array &&
      root.key === "stores" &&
      stores.array &&
      !store.array &&
      isSection(store.key) &&
      section.array
    );
  }

  /** Where the tokens are, as a fixture path (`stores[0].orders[12].items`), the first `depth` frames. */
  private path(depth = this.frames.length): string {
    let path = "";
    for (const { array, key, awaitingKey } of this.frames.slice(0, depth)) {
      if (key === undefined || awaitingKey) break; // the key being read is no place yet
      path += array ? `[${key}]` : `${path ? "." : ""}${shownKey(String(key))}`;
    }
    return path || "the top";
  }
}
