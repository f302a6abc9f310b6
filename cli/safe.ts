/**
 * Text from the service (references, descriptions, ids, anything served) made safe for a terminal:
 * every control character (C0, DEL, C1) and every bidirectional override or isolate is shown as an
 * escape (`\x1b`, `\u202e`) instead of reaching the terminal, where it could clear the screen, set
 * the title, recolour or reorder what the operator reads. Machine output (`--json`) never passes
 * here: it carries the API's values as they are.
 */

// C0 (but \n, which `lines` keeps), DEL, C1; the bidi embeddings, overrides, isolates and marks.
const unsafe = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const unsafeOrNewline = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(char: string): string {
  const named1 = named[char];
  if (named1 !== undefined) return named1;
  const code = char.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** One value for a cell or a line: every unsafe character escaped, newlines included. */
export function safe(text: string): string {
  return text.replace(unsafeOrNewline, escapeOne);
}

/** Text of several lines the CLI composed (a table, a message): unsafe characters escaped, newlines kept. */
export function safeLines(text: string): string {
  return text.replace(unsafe, escapeOne);
}
