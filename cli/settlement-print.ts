/**
 * Settlement replies for people: a command's `result` (an instruction, the withdrawals a sync
 * moved, a deposit's coordinate) as `key  value` lines and tables, never raw JSON in a cell.
 * Nested objects become dotted keys (`instruction.expiry`), arrays of objects tables of their
 * own, an object carrying `amount` and `asset` shows the amount in major units.
 */
import type { Json, OperationView } from './api.js';
import type { Context } from './context.js';
import { type AmountText, Money } from './money.js';
import { details, show, table, time } from './output.js';
import { type SubmitFlags, decisionOf, printReply, send } from './submit.js';
import { type WaitUntil, failureOf } from './wait.js';

type Record_ = { [key: string]: Json };

const isRecord = (value: Json | undefined): value is Record_ => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Scalars as they print in a cell: strings as they are, the rest as their JSON text (numbers, booleans). */
const cell = (value: Json | undefined): string => (value === undefined || value === null ? '-' : typeof value === 'string' ? value : JSON.stringify(value));

/** `key  value` lines (dotted keys for nested objects) and the tables of arrays of objects. */
function flatten(value: Record_, amount: AmountText, prefix: string, lines: Record<string, string>, tables: { title: string; rows: Record_[] }[]): void {
  for (const [key, v] of Object.entries(value)) {
    const name = prefix === '' ? key : `${prefix}.${key}`;
    // A result's absent fields come as null (`account: null` on a withdrawal): not worth a line.
    if (prefix === '' && (v === null || v === undefined)) continue;
    if (key === 'amount' && typeof v === 'string' && typeof value.asset === 'string') lines[name] = amount(v, value.asset);
    else if (isRecord(v)) flatten(v, amount, name, lines, tables);
    else if (Array.isArray(v) && v.some(isRecord)) tables.push({ title: name, rows: v.filter(isRecord) });
    else if (Array.isArray(v)) lines[name] = v.length === 0 ? '(none)' : v.map(cell).join(', ');
    else lines[name] = cell(v);
  }
}

/** A table of records, one column per key any of them has (nested values flattened into their cell's text). */
function recordsTable(rows: readonly Record_[], amount: AmountText): string {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const text = (r: Record_, key: string): string => {
    const v = r[key];
    if (key === 'amount' && typeof v === 'string' && typeof r.asset === 'string') return amount(v, r.asset);
    if (!isRecord(v)) return Array.isArray(v) ? v.map(cell).join(', ') : cell(v);
    const inner: Record<string, string> = {};
    flatten(v, amount, '', inner, []);
    return Object.entries(inner).map(([k, x]) => `${k}=${x}`).join(' ');
  };
  return table(keys.map((key) => ({ header: key.toUpperCase().replace(/_/g, ' '), value: (r: Record_) => text(r, key) })), rows);
}

/** A result (or any reply object) as lines, then its tables, each under its name. */
export function resultText(result: Record_, amount: AmountText, head: Record<string, string | undefined> = {}): string {
  const lines: Record<string, string> = {};
  const tables: { title: string; rows: Record_[] }[] = [];
  flatten(result, amount, '', lines, tables);
  return [details({ ...head, ...lines }), ...tables.map((t) => `\n${t.title}\n${recordsTable(t.rows, amount)}`)].join('\n');
}

/** A settlement operation (a withdrawal, a sync, an observation) decided; a rejected or expired one then fails the process (exit 1). */
export function printSettlementOperation(ctx: Context, view: OperationView, amount: AmountText): void {
  ctx.out.result(view, () =>
    resultText((view.result ?? {}) as Record_, amount, {
      operation: view.operation_reference,
      command: view.command,
      state: view.state,
      terminal: String(view.terminal),
      submitted: time(view.submitted_at),
      decided: time(view.decided_at),
      'client key': view.client_key,
      reference: view.reference === undefined ? undefined : show(view.reference),
      error: view.error === undefined ? undefined : `${view.error.error}: ${view.error.description}`,
    }),
  );
  const failure = failureOf(view);
  if (failure !== null) throw failure;
}

/** Sends a settlement command and prints its decision with the result as lines and tables , or the acknowledgement with `--no-wait`. */
export async function submitSettlement(ctx: Context, path: string, body: unknown, flags: SubmitFlags, until: WaitUntil = 'decided'): Promise<OperationView | null> {
  const reply = await send(ctx, path, body, flags);
  if (flags.wait === false) {
    printReply(ctx, reply);
    return null;
  }
  const view = await decisionOf(ctx, reply, flags, until);
  printSettlementOperation(ctx, view, await Money.forPeople(ctx.out.machine, ctx.client()));
  return view;
}
