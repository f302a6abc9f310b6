/**
 * JSON's structural characters as numbers, for the scanners that compare character or byte
 * codes (daemon/genesis-scan.ts over a file's bytes, daemon/http/raw-json.ts over a body's
 * text): the same values in UTF-8 and UTF-16, and no one-character string per character.
 */
export const quote = 0x22;
export const backslash = 0x5c;
export const comma = 0x2c;
export const colon = 0x3a;
export const openBrace = 0x7b;
export const closeBrace = 0x7d;
export const openBracket = 0x5b;
export const closeBracket = 0x5d;
export const minus = 0x2d;
export const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
/** Space, tab, LF or CR (JSON's whitespace); NaN, past the end, is none. */
export const isWhitespace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
