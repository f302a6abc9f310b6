/**
 * Text from outside (a caller's value, a stored string, a server's reply) made one line for a
 * report, a log line or a terminal: every control character (C0 with the newlines, DEL, C1), the
 * line and paragraph separators and the bidirectional controls are shown as escapes (`\n`,
 * `\x1b`, `\u202e`), so the text can neither start a line of its own (forging a report's
 * `name: ok`) nor drive a terminal.
 */

/** C0 but the newline, DEL, C1; the bidi embeddings, overrides, isolates and marks; the Unicode line separators. */
export const unsafeButNewline = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const unsafe = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function escapeChar(char: string): string {
  const known = named[char];
  if (known !== undefined) return known;
  const code = char.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** The text on one line: every unsafe character escaped, newlines included. */
export function oneLine(text: string): string {
  return text.replace(unsafe, escapeChar);
}

/** Longest caller-supplied value a report quotes; past it, the quote is cut and says so. */
export const quotedCharsMax = 80;

/** A caller-supplied value as a report quotes it: in double quotes, on one line, bounded. */
export function quoted(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  const cut = text.length > quotedCharsMax ? `${text.slice(0, quotedCharsMax)}…` : text;
  return `"${oneLine(cut.replaceAll('\\', '\\\\').replaceAll('"', '\\"'))}"`;
}
