import { fstatSync, statSync } from "node:fs";
import { FILE_SYSTEM_REASONS } from "../file-system";
import { DIRECTION_CONTROLS, LINE_SEPARATORS } from "../format/text";
import { UsageError } from "./errors";

/**
 * A command's output on stdout. A failed write is kept, neither thrown nor dropped, so
 * that `storeapi keys create … > key.txt` on a full disk ends with exit 1 and one line
 * instead of exit 0 and an empty file: Bun reports the failure as an event a turn
 * later, Deno throws it from the write, and `console.log` drops it.
 */
let failure: NodeJS.ErrnoException | undefined;

const fail = (error: unknown) => {
  failure ??= error as NodeJS.ErrnoException;
};

/** What the operator must do when the output is lost (a secret shown only once). */
let ifLost: string | undefined;

/**
 * Before a command makes a secret it shows only once: refuses when stdout is `/dev/null`,
 * where the secret would be lost with exit 0. A closed stdout (`>&-`) looks the same: Bun
 * and Deno open `/dev/null` in its place, so no write fails.
 */
export function refuseDiscardedOutput(what: string): void {
  let discarded = false;
  try {
    const out = fstatSync(1);
    discarded = out.isCharacterDevice() && out.rdev === statSync("/dev/null").rdev;
  } catch {
    return; // no stdout to look at: a failed write will say so
  }
  if (discarded)
    throw new UsageError(
      `stdout is /dev/null (or closed), and ${what} is shown only once: send it to a file or a pipe`,
    );
}

/** Says, should stdout fail, what its loss leaves behind and how to mend it. */
export const ifOutputLost = (remedy: string) => {
  ifLost = remedy;
};

/** Writes the OS has not taken yet (a pipe takes 64 KiB at a time), and who waits for none left. */
let unwritten = 0;
let allWritten: (() => void) | undefined;

/**
 * Control characters as `\xHH`: names and other data the output shows come from API
 * clients and fixtures, and an escape sequence in a key's name must not recolour, move or
 * rewrite the operator's terminal; nor may a newline in it add a line that looks like
 * another key. Unicode's line separators and direction overrides (which reverse the rest
 * of a line) are written `\uHHHH` for the same reason. Text of several lines (help) keeps
 * its newlines and tabs.
 */
const CONTROL = new RegExp(`[\\p{Cc}${LINE_SEPARATORS}${DIRECTION_CONTROLS}]`, "gu");
const CONTROL_BUT_LINES = new RegExp(
  `(?![\\n\\t])[\\p{Cc}${LINE_SEPARATORS}${DIRECTION_CONTROLS}]`,
  "gu",
);
const hex = (c: string, digits: number) => c.charCodeAt(0).toString(16).padStart(digits, "0");
const escaped = (c: string) => (c.charCodeAt(0) > 0xff ? `\\u${hex(c, 4)}` : `\\x${hex(c, 2)}`);
/**
 * JSON escapes C0 itself; DEL, C1 (0x9b starts a sequence on some terminals), the line
 * separators and the direction controls are valid JSON text, written `\uHHHH` here.
 */
const UNESCAPED_IN_JSON = new RegExp(
  `(?![\\u0000-\\u001f])[\\p{Cc}${LINE_SEPARATORS}${DIRECTION_CONTROLS}]`,
  "gu",
);

/** Text of the program's own, over several lines (help, usage). */
export const printText = (text: string) => write(text.replace(CONTROL_BUT_LINES, escaped));

/** One line, whatever the data in it holds. */
export const printLine = (text: string) => write(`${oneSafeLine(text)}\n`);

/** `text` with its control characters (a newline too) written as `\xHH`. */
export const oneSafeLine = (text: string) => text.replace(CONTROL, escaped);

export const printJson = (value: unknown) =>
  write(`${JSON.stringify(value, null, 2).replace(UNESCAPED_IN_JSON, (c) => `\\u${hex(c, 4)}`)}\n`);

function write(text: string): void {
  unwritten++;
  let settled = false;
  const settle = (error?: unknown) => {
    if (settled) return;
    settled = true;
    if (error) fail(error);
    if (--unwritten === 0) allWritten?.();
  };
  try {
    process.stdout.write(text, settle);
  } catch (error) {
    settle(error);
  }
}

/** From now on, a failed write to stdout is kept for `outputFailure`. */
export function watchOutput(): void {
  process.stdout.on("error", fail);
}

/**
 * Waits until stdout has taken everything written (a pipe is async), then says why it
 * could not, if it could not. A reader that stopped reading (`| head`) is no failure,
 * unless what it did not read is a secret shown only once.
 */
export async function outputFailure(): Promise<string | undefined> {
  if (unwritten > 0 && !failure)
    await new Promise<void>((resolve) => {
      allWritten = resolve;
    });
  await new Promise((resolve) => setImmediate(resolve)); // Bun's failure event comes a turn later
  if (!failure || (failure.code === "EPIPE" && !ifLost)) return undefined;
  const reason =
    failure.code === "EPIPE"
      ? "its reader closed it first"
      : (FILE_SYSTEM_REASONS[failure.code ?? ""] ?? failure.message);
  const why = `cannot write the output: ${reason}`;
  return ifLost ? `${why}; ${ifLost}` : why;
}

export type Progress = (what: string, done: number, total: number) => void;

/**
 * Progress of long work on stderr (so stdout stays clean for --json): at most a line a
 * second. Work of fewer than `from` steps says nothing unless it runs past a second (a
 * few big stores), and then ends with its last step. Each `what` (a store's section, say)
 * is judged on its own: many small ones that together take seconds print nothing (a load
 * of 30 tiny stores printed a line per section).
 */
export function progressPrinter(
  from: number,
  write: (line: string) => void = (line) => process.stderr.write(line),
  clock = Date.now,
): Progress {
  let current: string | undefined;
  /** When the current work began: the previous work's last step, or when this printer was made. */
  let started = clock();
  let lastStep = started;
  let printedCurrent = false;
  let lastLine = Number.NEGATIVE_INFINITY;
  return (what: string, done: number, total: number) => {
    const now = clock();
    if (what !== current) {
      if (current !== undefined) started = lastStep;
      current = what;
      printedCurrent = false;
    }
    lastStep = now;
    if (total < from && !printedCurrent && now - started < 1000) return;
    // The last step ends what was shown; a piece that showed nothing waits its turn too.
    if ((done !== total || !printedCurrent) && now - lastLine < 1000) return;
    lastLine = now;
    printedCurrent = true;
    write(`${what}: ${done}/${total}\n`);
  };
}
