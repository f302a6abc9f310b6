/**
 * Text from the service (references, descriptions, ids, anything served) made safe for a terminal:
 * every control character (C0, DEL, C1) and every bidirectional override or isolate is shown as an
 * escape (`\x1b`, `\u202e`) instead of reaching the terminal, where it could clear the screen, set
 * the title, recolour or reorder what the operator reads. Machine output (`--json`) never passes
 * here: it carries the API's values as they are. The escaping is src/one-line.ts's, which the daemon's reports use too.
 */
import { escapeChar, oneLine, unsafeButNewline } from '../src/one-line.js';

/** One value for a cell or a line: every unsafe character escaped, newlines included. */
export function safe(text: string): string {
  return oneLine(text);
}

/** Text of several lines the CLI composed (a table, a message): unsafe characters escaped, newlines kept. */
export function safeLines(text: string): string {
  return text.replace(unsafeButNewline, escapeChar);
}
