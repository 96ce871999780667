/**
 * Text the database can keep exactly: the native driver cuts a string at U+0000 and turns
 * a lone surrogate (not valid Unicode) into U+FFFD, so both are refused rather than altered.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what is refused
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/gu;

export const storable = (s: string) => s.search(UNSTORABLE) === -1;

/** `s` without what `storable` refuses: NUL and lone surrogates. */
export const withoutUnstorable = (s: string) => s.replace(UNSTORABLE, "");

/** Decodes UTF-8 and throws on bytes that are not: text a client sent is refused, never altered. */
export const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * What can move or turn text shown after it, besides control characters: Unicode's line
 * and paragraph separators, and the direction embeddings, overrides and isolates (U+202E
 * shows the rest of a line reversed). For regex character classes, beside `\p{Cc}`.
 */
export const LINE_SEPARATORS = "\\u2028\\u2029";
export const DIRECTION_CONTROLS = "\\u202a-\\u202e\\u2066-\\u2069";
