/**
 * A genesis document's shape and bounds, checked over its bytes as they arrive: an
 * object of sections, each an array, each named once; entries of bounded size and depth
 * whose values are bounded (daemon/constants.ts), whose members are named once. Entries
 * of the wanted section are built and handed out; nothing else is kept, so a hostile
 * file costs at most one entry of memory. A purpose-built scanner: a general JSON
 * parser's token objects cost most of the import's time (docs/performance.md, genesis).
 */
import { entryError, genesisSections, shown } from '../src/book/genesis-entries.js';
import { genesisEntriesMax } from '../src/constants.js';
import { genesisEntryCharsMax, genesisEntryDepthMax, genesisValueCharsMax } from './constants.js';
import { backslash, closeBrace, closeBracket, colon, comma, isDigit, isWhitespace, minus, openBrace, openBracket, quote } from './json-chars.js';

/** One level of nesting; one object per depth, reused by every value opened there (none allocated per entry). */
class Container {
  array = false;
  /** Built only inside an entry of the wanted section. */
  value: unknown[] | Record<string, unknown> | null = null;
  /** An object's member names so far (a repeated one is refused: readers differ on which they keep). */
  readonly members: string[] = [];
  key: string | null = null;

  reset(array: boolean, value: unknown[] | Record<string, unknown> | null): this {
    this.array = array;
    this.value = value;
    this.members.length = 0;
    this.key = null;
    return this;
  }
}

/** Raw bytes one string or number may take: \uXXXX is six bytes for one character; a longer run is refused without being held. */
const valueBytesMax = 6 * genesisValueCharsMax + 2;

const enum Expect {
  Value,
  ValueOrEnd,
  Key,
  KeyOrEnd,
  Colon,
  CommaOrEnd,
  Done,
}

const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/** Bytes decoded at a time for the text of plain strings (GenesisScan.latin1). */
const textWindowBytes = 512;

/** A lexeme that runs past the bytes scanned so far: scanned again, whole, once more have come. */
const more = -1;

/** The document is not JSON: the reason in the words the general parser used before this scanner (stream-json's). */
const notJson = (reason: string): never => entryError('document', `is not JSON (${reason})`);
const unparsable = (what: string): never => notJson(`Parser cannot parse input: ${what}`);

/**
 * Walks a whole document's bytes (scan() over consecutive buffers, then end()), refusing
 * the first thing out of shape, and pushes the entries of `wanted` (none when null),
 * finishing once that section ends. `onSection` hears each section's name and the file
 * offset of its array as it begins; `resumeAt` starts a walk at such an offset instead,
 * inside the document, so a section is read without walking the ones before it.
 */
export class GenesisScan {
  private readonly stack: Container[] = [];
  /** The containers of each depth, made once. */
  private readonly pool: Container[] = [];
  /**
   * A window of the bytes being scanned, from `windowFrom`, as a string of one character
   * per byte (latin1): a plain string's text is a slice of it, which costs no call into
   * Node per string. A slice keeps its whole window alive, so windows are short
   * (textWindowBytes): whatever strings the import keeps, each holds at most that much.
   */
  private window = '';
  private windowFrom = 0;
  private readonly seen = new Set<string>();
  private begun = false;
  private section: string | null = null;
  private entry = -1;
  private entryChars = 0;
  private expect = Expect.Value;
  /** The wanted section has ended: nothing more to read. */
  finished = false;
  /** The text of the last string lexed. */
  private text = '';
  /** A string or number being lexed is a value whose begin() is still due (its refusals name its entry). */
  private pending = false;

  constructor(
    private readonly wanted: string | null,
    private readonly onSection: (name: string, offset: number) => void = () => {},
    resumeAt: string | null = null,
    /** Hears each entry of any section as it begins (counted for progress). */
    private readonly onEntry: () => void = () => {},
  ) {
    if (resumeAt !== null) {
      this.begun = true;
      this.stack.push(new Container());
      this.section = resumeAt;
      this.expect = Expect.Value;
    }
  }

  private where(): string {
    const { section, entry, stack } = this;
    return section === null ? 'document' : entry < 0 || stack.length < 2 ? section : `${section}[${entry}]`;
  }
  private building(): boolean {
    return this.section !== null && this.section === this.wanted;
  }

  /** A value (container or not) begins at the current depth. */
  private begin(container: boolean): void {
    const depth = this.stack.length;
    if (depth === 0) {
      if (this.begun || !container) entryError('document', 'must be an object');
      this.begun = true;
    } else if (depth === 1) {
      if (!container) entryError(this.where(), 'must be an array');
    } else {
      if (depth === 2) {
        this.entry++;
        this.onEntry();
        this.entryChars = 0;
        if (this.entry === genesisEntriesMax) entryError(this.section!, `holds more than ${genesisEntriesMax} entries`);
      }
      if (container && depth - 1 > genesisEntryDepthMax) entryError(this.where(), `nests deeper than ${genesisEntryDepthMax} levels`);
    }
  }
  private open(array: boolean, offset: number): void {
    this.begin(true);
    const depth = this.stack.length;
    if (depth === 0 && array) entryError('document', 'must be an object');
    if (depth === 1 && !array) entryError(this.where(), 'must be an array');
    const value = depth >= 2 && this.building() ? (array ? [] : {}) : null;
    this.stack.push((this.pool[depth] ??= new Container()).reset(array, value));
    this.count(1);
    if (this.stack.length === 2) this.onSection(this.section!, offset);
    this.expect = array ? Expect.ValueOrEnd : Expect.KeyOrEnd;
  }
  private close(out: unknown[]): void {
    const closed = this.stack.pop()!;
    this.count(1);
    if (this.stack.length === 1) {
      const ended = this.section;
      this.section = null;
      this.expect = Expect.CommaOrEnd;
      if (ended === this.wanted) this.finished = true;
    } else if (this.stack.length === 0) this.expect = Expect.Done;
    else this.place(closed.value, out);
  }
  /** Everything inside a section's array is some entry's: its characters, every value and mark counted. */
  private count(chars: number): void {
    if (this.stack.length < 2) return;
    this.entryChars += chars;
    if (this.entryChars > genesisEntryCharsMax) entryError(this.where(), `is longer than ${genesisEntryCharsMax} characters`);
  }
  /** A complete value at the current depth: placed in its container, or (an entry) handed out. */
  private place(value: unknown, out: unknown[]): void {
    this.expect = Expect.CommaOrEnd;
    const top = this.stack[this.stack.length - 1]!;
    if (this.stack.length === 2) {
      if (this.building()) out.push(value);
      return;
    }
    if (top.value === null) return;
    if (Array.isArray(top.value)) top.value.push(value);
    else if (top.key === '__proto__') {
      // A member that would set a plain object's prototype: the entry becomes one without any.
      const safe = Object.assign(Object.create(null) as Record<string, unknown>, top.value);
      safe[top.key] = value;
      top.value = safe;
    } else top.value[top.key!] = value;
  }
  private key(name: string): void {
    const top = this.stack[this.stack.length - 1]!;
    this.expect = Expect.Colon;
    if (this.stack.length === 1) {
      if (!(genesisSections as readonly string[]).includes(name)) entryError(shown(name), 'is not a genesis section');
      if (this.seen.has(name)) entryError(name, 'appears twice (one section of each name)');
      this.seen.add(name);
      this.section = name;
      this.entry = -1;
      return;
    }
    const { members } = top;
    if (members.includes(name)) entryError(this.where(), `member ${shown(name)} appears twice`);
    members.push(name);
    top.key = name;
  }

  private tooLong(): never {
    this.began();
    entryError(this.where(), `holds a string, member name or number longer than ${genesisValueCharsMax} characters`);
  }
  /** The pending value's begin(), once it is known to be whole or refused. */
  private began(): void {
    if (!this.pending) return;
    this.pending = false;
    this.begin(false);
  }

  /**
   * Lexes the string whose opening quote is at `at`: its end (past the closing quote),
   * or `more`; `this.text` is set when `decode`. Its characters are bounded as they come.
   */
  private string(buf: Buffer, at: number, end: number, last: boolean, decode: boolean): number {
    let i = at + 1;
    // A run of plain characters (printable ASCII, no escape) first, one test per byte, while within the bound: most strings are only that.
    const plainEnd = Math.min(end, at + genesisValueCharsMax + 2);
    for (let c = buf[i]!; i < plainEnd && c !== quote && c !== backslash && c >= 0x20 && c < 0x80; c = buf[++i]!);
    let chars = i - at - 1;
    let plain = true;
    for (;;) {
      if (i >= end || chars > genesisValueCharsMax || i - at > valueBytesMax) {
        if (chars > genesisValueCharsMax || i - at > valueBytesMax) this.tooLong();
        if (last) notJson('Parser has expected a string value');
        return more;
      }
      const c = buf[i]!;
      if (c === quote) break;
      if (c < 0x20) unparsable('escaped characters');
      if (c === backslash) {
        plain = false;
        if (i + 1 >= end) {
          if (last) notJson('Parser has expected a string value');
          return more;
        }
        const e = buf[i + 1]!;
        if (e === 0x75) {
          if (i + 6 > end) {
            if (last) notJson('Parser has expected a string value');
            return more;
          }
          for (let h = i + 2; h < i + 6; h++) if (!isHex(buf[h]!)) unparsable('escaped characters');
          i += 6;
        } else if (e === quote || e === backslash || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) i += 2;
        else unparsable('escaped characters');
        chars++;
        continue;
      }
      if (c >= 0x80) {
        plain = false;
        // A UTF-8 sequence's continuation bytes add no character; a 4-byte one is two UTF-16 units.
        if (c >= 0xc0) chars += c >= 0xf0 ? 2 : 1;
      } else chars++;
      i++;
    }
    if (decode || !plain) {
      // Escapes resolved by JSON.parse over the lexeme just checked; bad UTF-8 reads as U+FFFD, as a text decoder gives.
      this.text = plain ? this.latin1(buf, at + 1, i) : (JSON.parse(buf.toString('utf8', at, i + 1)) as string);
      if (this.text.length > genesisValueCharsMax) this.tooLong();
    }
    return i + 1;
  }

  /** Lexes the number starting at `at` (grammar of RFC 8259): its end, or `more`. */
  private number(buf: Buffer, at: number, end: number, last: boolean): number {
    let i = at;
    const tooLong = () => this.tooLong();
    const digits = (what: string) => {
      const from = i;
      while (i < end && isDigit(buf[i]!)) if (++i - at > genesisValueCharsMax) tooLong();
      if (i === from && i < end) unparsable(`expected ${what}`);
    };
    if (buf[i] === minus) i++;
    if (i < end && buf[i] === 0x30) i++;
    else digits('a starting digit');
    if (i < end && buf[i] === 0x2e) {
      i++;
      digits('a fractional part of a number');
    }
    if (i < end && (buf[i] === 0x65 || buf[i] === 0x45)) {
      i++;
      if (i < end && (buf[i] === 0x2b || buf[i] === minus)) i++;
      digits('an exponent part of a number');
    }
    if (i - at > genesisValueCharsMax) tooLong();
    if (i >= end) {
      if (!last) return more;
      const tail = buf[end - 1]!;
      if (!isDigit(tail)) notJson('Parser has expected a digit');
    }
    return i;
  }

  /**
   * Scans `buf[from, end)`: the index where scanning stopped (a lexeme running past `end`
   * is left for the next call, which gives it again with what follows), `end` once all is
   * read, or where the wanted section ended. `last`: no bytes follow `end`.
   */
  scan(buf: Buffer, from: number, end: number, last: boolean, offset: number, out: unknown[]): number {
    this.window = '';
    let i = from;
    while (i < end && !this.finished) {
      const c = buf[i]!;
      // Only a byte up to a space may be whitespace: the call is skipped for the rest (this loop is too large for it to be inlined).
      if (c <= 0x20 && isWhitespace(c)) {
        i++;
        continue;
      }
      switch (this.expect) {
        case Expect.Done:
          return unparsable('unexpected characters');
        case Expect.Colon:
          if (c !== colon) unparsable("expected ':'");
          this.expect = Expect.Value;
          i++;
          continue;
        case Expect.CommaOrEnd: {
          const top = this.stack[this.stack.length - 1]!;
          if (c === comma) this.expect = top.array ? Expect.Value : Expect.Key;
          else if (c === (top.array ? closeBracket : closeBrace)) this.close(out);
          else unparsable("expected ','");
          i++;
          continue;
        }
        case Expect.Key:
        case Expect.KeyOrEnd: {
          if (c === closeBrace && this.expect === Expect.KeyOrEnd) {
            this.close(out);
            i++;
            continue;
          }
          if (c === closeBrace) unparsable("unexpected token '}'");
          if (c !== quote) unparsable('expected an object key');
          const next = this.string(buf, i, end, last, true);
          if (next === more) return i;
          this.count(3 + this.text.length);
          this.key(this.text);
          i = next;
          continue;
        }
        default: {
          if (c === closeBracket) {
            if (this.expect !== Expect.ValueOrEnd) unparsable("unexpected token ']'");
            this.close(out);
            i++;
            continue;
          }
          if (c === openBrace || c === openBracket) {
            this.open(c === openBracket, offset + i);
            i++;
            continue;
          }
          // A scalar where a container must be is refused before it is read.
          if (this.stack.length < 2) this.begin(false);
          let next: number;
          let value: unknown;
          this.pending = true;
          if (c === quote) {
            const building = this.building();
            next = this.string(buf, i, end, last, building);
            if (next === more) return this.unpend(i);
            this.began();
            value = building ? this.text : null;
            this.count(3 + (building ? this.text.length : next - i - 2));
          } else if (c === minus || isDigit(c)) {
            next = this.number(buf, i, end, last);
            if (next === more) return this.unpend(i);
            this.began();
            value = this.building() ? Number(this.latin1(buf, i, next)) : null;
            this.count(3 + next - i);
          } else {
            const word = c === 0x74 ? 'true' : c === 0x66 ? 'false' : c === 0x6e ? 'null' : null;
            if (word === null) unparsable('expected a value');
            if (i + word!.length > end) {
              if (last) unparsable('expected a value');
              return this.unpend(i);
            }
            if (this.latin1(buf, i, i + word!.length) !== word) unparsable('expected a value');
            next = i + word!.length;
            this.began();
            value = word === 'true' ? true : word === 'false' ? false : null;
            this.count(1);
          }
          this.place(value, out);
          i = next;
        }
      }
    }
    return i;
  }

  /** `buf[from, to)` as latin1 text (a plain string, a number, a word to compare): a slice of the window, which moves to `from` when it does not hold them. */
  private latin1(buf: Buffer, from: number, to: number): string {
    if (from < this.windowFrom || to > this.windowFrom + this.window.length) {
      if (to - from > textWindowBytes) return buf.toString('latin1', from, to);
      this.windowFrom = from;
      this.window = buf.toString('latin1', from, Math.min(buf.length, from + textWindowBytes));
    }
    return this.window.slice(from - this.windowFrom, to - this.windowFrom);
  }

  private unpend(at: number): number {
    this.pending = false;
    return at;
  }

  /** After the last bytes: the document must have ended. */
  end(): void {
    if (this.finished || this.expect === Expect.Done) return;
    if (this.expect === Expect.Value || this.expect === Expect.ValueOrEnd) notJson('Parser has expected a value');
    if (this.expect === Expect.Key || this.expect === Expect.KeyOrEnd) unparsable('expected an object key');
    unparsable(this.expect === Expect.Colon ? "expected ':'" : "expected ','");
  }
}
