/**
 * Results go to stdout, everything else to stderr. On a terminal results are tables for people;
 * with `--json`, or when stdout is not a terminal, they are the JSON the API returned. `-o` picks
 * the format whatever stdout is: json, ndjson (one compact value per line, an array's elements
 * each on its own), table, or yaml.
 */
import type { ComponentType } from 'react';
import type { Json } from './api.js';
import { UsageError } from './errors.js';
import { type Io, isTerminal } from './io.js';
import { safe, safeLines } from './safe.js';

export const formats = ['json', 'ndjson', 'table', 'yaml'] as const;
export type Format = (typeof formats)[number];

export interface OutputFlags {
  json?: boolean | undefined;
  /** `-o`: one of `formats`. */
  output?: string | undefined;
  /** A dot path into the result (`result.account`): only that value is printed, raw. */
  field?: string | undefined;
}

const inkColumns = 1000;

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  /** Numbers (money included, as strings) line up on the right. */
  alignRight?: boolean;
}

export class Output {
  private yamlText: ((value: unknown) => string) | undefined;

  constructor(
    readonly io: Io,
    private readonly flags: OutputFlags,
  ) {}

  /** `-o`, else json with `--json`, else a table on a terminal and JSON otherwise. */
  get format(): Format {
    const chosen = this.flags.output;
    if (chosen === undefined) return this.flags.json === true || !isTerminal(this.io.stdout) ? 'json' : 'table';
    if (!(formats as readonly string[]).includes(chosen)) throw new UsageError(`-o must be one of ${formats.join(', ')}: ${chosen}`);
    if (this.flags.json === true && chosen !== 'json') throw new UsageError(`--json and -o ${chosen} disagree: give one`);
    return chosen as Format;
  }

  /** Checks the flags and loads what the format needs (the YAML writer only when asked for). */
  async prepare(): Promise<void> {
    if (this.format === 'yaml') this.yamlText = (await import('yaml')).stringify;
  }

  /** Whether one field of each result is printed (`--field`), not the result. */
  get picksField(): boolean {
    return this.flags.field !== undefined;
  }

  /** Whether programs read stdout (any format but a table). */
  get machine(): boolean {
    return this.format !== 'table';
  }

  /** Prints one result: `human` renders it for a terminal; otherwise it is printed as JSON. */
  result(value: unknown, human: () => string): void {
    if (this.flags.field !== undefined) {
      const text = fieldText(value, this.flags.field);
      return this.write(this.machine ? text : safe(text));
    }
    switch (this.format) {
      case 'table':
        // Cells are escaped where they are made; this pass catches any served text a `human` left raw.
        return this.write(safeLines(human()));
      case 'json':
        return this.write(JSON.stringify(value, null, 2));
      case 'ndjson':
        for (const item of Array.isArray(value) ? value : [value]) this.line(item);
        return;
      case 'yaml':
        return this.write(this.yaml(value));
    }
  }

  private yaml(value: unknown): string {
    if (this.yamlText === undefined) throw new Error('Output.prepare() before YAML output');
    return this.yamlText(value);
  }

  /**
   * Like `result`, rendering an Ink view for people. Ink (and the view) are loaded only then:
   * loading Ink costs more than the rest of a run, and scripts never need it.
   */
  async view<Props extends object>(value: unknown, component: () => Promise<ComponentType<Props>>, props: Props): Promise<void> {
    if (this.machine || this.flags.field !== undefined) return this.result(value, () => '');
    const [{ renderToString }, { createElement }, View] = await Promise.all([import('ink'), import('react'), component()]);
    // Wide enough that Ink never wraps a table row; the terminal shows long rows as it always does.
    this.write(renderToString(createElement(View, props), { columns: inkColumns }));
  }

  /** A line under a table (how to read on): shown only where a table is (not with --field). */
  footer(text: string): void {
    if (!this.machine && this.flags.field === undefined) this.write(safeLines(text));
  }

  /** One record of a stream: a JSON line (NDJSON), or with `-o yaml` one YAML document. */
  line(value: unknown): void {
    // On a stream, `--field` picks the field out of each record.
    if (this.flags.field !== undefined) {
      const text = fieldText(value, this.flags.field);
      return this.write(this.machine ? text : safe(text));
    }
    if (this.format === 'yaml') this.io.stdout.write(`---\n${this.yaml(value)}`);
    else this.io.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** Progress and notes for people: stderr, so stdout stays parseable. */
  note(message: string): void {
    this.io.stderr.write(`${safeLines(message)}\n`);
  }

  private write(text: string): void {
    this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }
}

/** `result.account`, `rows[2].asset`, `[0].id`: names after dots, array indexes in brackets. */
export function fieldPath(path: string): (string | number)[] {
  const steps: (string | number)[] = [];
  const step = /(?:^|\.)([^.[\]]+)|\[(\d+)\]/y;
  let match: RegExpExecArray | null;
  while (step.lastIndex < path.length && (match = step.exec(path)) !== null) steps.push(match[2] === undefined ? match[1]! : Number(match[2]));
  if (path.length === 0 || step.lastIndex !== path.length) throw new UsageError(`--field ${path}: not a field path (for example result.account or rows[2].asset)`);
  return steps;
}

export function fieldText(value: unknown, path: string): string {
  let at: unknown = value;
  for (const key of fieldPath(path)) {
    const has = typeof key === 'number' ? Array.isArray(at) && key < at.length : at !== null && typeof at === 'object' && !Array.isArray(at) && Object.hasOwn(at, key);
    if (!has) throw new UsageError(`--field ${path}: the result has no such field`);
    at = (at as Record<string | number, unknown>)[key];
  }
  return typeof at === 'string' ? at : JSON.stringify(at);
}

/** The table's cells, each escaped for the terminal (a served value may hold anything). */
export function cellsOf<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string[][] {
  return rows.map((row) => columns.map((c) => safe(c.value(row))));
}

/** Each column's width: its widest cell or header. */
export function columnWidths<Row>(columns: readonly Column<Row>[], cells: readonly (readonly string[])[]): number[] {
  return columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
}

export function table<Row>(columns: readonly Column<Row>[], rows: readonly Row[], header = true): string {
  if (rows.length === 0) return '(none)';
  const cells = cellsOf(columns, rows);
  const widths = columnWidths(columns, cells);
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => (columns[i]!.alignRight ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [...(header ? [line(columns.map((c) => c.header))] : []), ...cells.map(line)].join('\n');
}

/** A record as `key  value` lines, for one object on a terminal. */
export function details(record: Record<string, unknown>): string {
  const entries = Object.entries(record).filter(([, v]) => v !== undefined);
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${k.padEnd(width)}  ${safe(show(v))}`).join('\n');
}

export function show(value: unknown): string {
  if (value === null || value === undefined) return '-';
  return typeof value === 'string' ? value : JSON.stringify(value as Json);
}

export function time(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '-' : new Date(ms).toISOString();
}
