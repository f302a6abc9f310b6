/**
 * The raw text of a top-level member of a JSON object, exactly as sent: `reference`
 * is echoed byte for byte (spec 2.1), so it cannot go through JSON.parse and back.
 * The input must already be known to be valid JSON (the body parser checked it);
 * this only finds where the member's value starts and ends.
 */

const whitespace = new Set([' ', '\t', '\n', '\r']);

function skipWhitespace(text: string, i: number): number {
  while (i < text.length && whitespace.has(text[i]!)) i++;
  return i;
}

/** The index just past the string literal starting at `i` (an opening quote). */
function endOfString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  throw new Error('unterminated string in JSON already parsed');
}

/** The index just past the JSON value starting at `i`. */
function endOfValue(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return endOfString(text, i);
  if (first === '{' || first === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text[j];
      if (c === '"') j = endOfString(text, j) - 1;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw new Error('unbalanced JSON already parsed');
  }
  let j = i;
  while (j < text.length && !whitespace.has(text[j]!) && text[j] !== ',' && text[j] !== '}' && text[j] !== ']') j++;
  return j;
}

/**
 * The raw text of member `name` of the top-level object in `json`, or null when the
 * document is not an object or has no such member. With duplicate names the last one
 * wins, as with JSON.parse. Member names are compared after unescaping.
 */
export function rawMember(json: string, name: string): string | null {
  let i = skipWhitespace(json, 0);
  if (json[i] !== '{') return null;
  i = skipWhitespace(json, i + 1);
  let found: string | null = null;
  while (i < json.length && json[i] !== '}') {
    const keyEnd = endOfString(json, i);
    const key = JSON.parse(json.slice(i, keyEnd)) as string;
    i = skipWhitespace(json, keyEnd);
    i = skipWhitespace(json, i + 1); // past ':'
    const valueEnd = endOfValue(json, i);
    if (key === name) found = json.slice(i, valueEnd);
    i = skipWhitespace(json, valueEnd);
    if (json[i] === ',') i = skipWhitespace(json, i + 1);
  }
  return found;
}

/** The raw text of each element of the JSON array `json` (already known to be valid JSON), in order. */
export function rawElements(json: string): string[] {
  let i = skipWhitespace(json, 0);
  if (json[i] !== '[') return [];
  i = skipWhitespace(json, i + 1);
  const elements: string[] = [];
  while (i < json.length && json[i] !== ']') {
    const end = endOfValue(json, i);
    elements.push(json.slice(i, end));
    i = skipWhitespace(json, end);
    if (json[i] === ',') i = skipWhitespace(json, i + 1);
  }
  return elements;
}
