/**
 * The raw text of a top-level member of a JSON object, exactly as sent: `reference`
 * is echoed byte for byte (spec 2.1), so it cannot go through JSON.parse and back.
 * The input must already be known to be valid JSON (the body parser checked it);
 * this only finds where the member's value starts and ends.
 */
import { backslash, closeBrace, closeBracket, comma, isWhitespace, openBrace, openBracket, quote } from '../json-chars.js';

function skipWhitespace(text: string, i: number): number {
  while (isWhitespace(text.charCodeAt(i))) i++;
  return i;
}

/** The index just past the string literal starting at `i` (an opening quote): each quote found by indexOf, kept if not escaped. */
function endOfString(text: string, i: number): number {
  for (let from = i + 1; ; ) {
    const q = text.indexOf('"', from);
    if (q === -1) throw new Error('unterminated string in JSON already parsed');
    // Escaped by an odd run of backslashes before it (the opening quote ends the run).
    let b = q - 1;
    while (text.charCodeAt(b) === backslash) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** The index just past the JSON value starting at `i`. */
function endOfValue(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === quote) return endOfString(text, i);
  if (first === openBrace || first === openBracket) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === quote) j = endOfString(text, j) - 1;
      else if (c === openBrace || c === openBracket) depth++;
      else if (c === closeBrace || c === closeBracket) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw new Error('unbalanced JSON already parsed');
  }
  let j = i;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (isWhitespace(c) || c === comma || c === closeBrace || c === closeBracket) break;
    j++;
  }
  return j;
}

/** A member name's text between its quotes, unescaped (JSON.parse only when it holds an escape). */
function memberName(text: string, start: number, end: number): string {
  const inner = text.slice(start + 1, end - 1);
  return inner.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : inner;
}

/**
 * The raw text of member `name` of the top-level object in `json`, or null when the
 * document is not an object or has no such member. With duplicate names the last one
 * wins, as with JSON.parse. Member names are compared after unescaping.
 */
export function rawMember(json: string, name: string): string | null {
  let i = skipWhitespace(json, 0);
  if (json.charCodeAt(i) !== openBrace) return null;
  i = skipWhitespace(json, i + 1);
  let found: string | null = null;
  while (i < json.length && json.charCodeAt(i) !== closeBrace) {
    const keyEnd = endOfString(json, i);
    const key = memberName(json, i, keyEnd);
    i = skipWhitespace(json, keyEnd);
    i = skipWhitespace(json, i + 1); // past ':'
    const valueEnd = endOfValue(json, i);
    if (key === name) found = json.slice(i, valueEnd);
    i = skipWhitespace(json, valueEnd);
    if (json.charCodeAt(i) === comma) i = skipWhitespace(json, i + 1);
  }
  return found;
}

/** The raw text of each element of the JSON array `json` (already known to be valid JSON), in order. */
export function rawElements(json: string): string[] {
  let i = skipWhitespace(json, 0);
  if (json.charCodeAt(i) !== openBracket) return [];
  i = skipWhitespace(json, i + 1);
  const elements: string[] = [];
  while (i < json.length && json.charCodeAt(i) !== closeBracket) {
    const end = endOfValue(json, i);
    elements.push(json.slice(i, end));
    i = skipWhitespace(json, end);
    if (json.charCodeAt(i) === comma) i = skipWhitespace(json, i + 1);
  }
  return elements;
}
