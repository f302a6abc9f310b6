/**
 * The book's per-asset totals: for each asset, the sum over every account of each
 * balance layer, stored under `tb/<asset>` and rewritten by every round that moves
 * the asset (in the round's batch). The trial balance is answered from them and
 * opening the book reads them, so neither costs a pass over every balance; the
 * full pass (`verifyTotals`) is for offline checks (`ledgerd check`).
 */
import { assert } from '../assert.js';
import { loadAssets } from './assets.js';
import { decodeBalanceText, encodeBalanceText } from '../model/codec.js';
import { type Balance, zeroBalance } from '../model/model.js';
import type { BatchOp, ReadView } from '../store/port.js';
import { keys, prefixEnd } from '../model/keys.js';

/** The signed sum of a total's layers: zero in a balanced book. */
export const totalMinor = (b: Balance): bigint => b.available + b.reserved + b.encumbered;

export const plusBalance = (a: Balance, b: Balance): Balance => ({ available: a.available + b.available, reserved: a.reserved + b.reserved, encumbered: a.encumbered + b.encumbered });

export function totalsWrite(asset: string, total: Balance): BatchOp & { type: 'put' } {
  return { type: 'put', key: keys.tb(asset), value: encodeBalanceText(total) };
}

/** The stored totals of every asset named: a sealed book keeps them for every registered asset. */
export async function readTotals(view: ReadView, assets: Iterable<string>): Promise<Map<string, Balance>> {
  const symbols = [...assets];
  const texts = await view.getMany(symbols.map(keys.tb));
  const totals = new Map<string, Balance>();
  for (const [i, symbol] of symbols.entries()) {
    const text = texts[i];
    assert(text !== undefined, `the book keeps totals for ${symbol}`);
    totals.set(symbol, decodeBalanceText(text));
  }
  return totals;
}

/** Sums every balance of the book per asset and layer: one pass over all of `bal/`, as long as the book is large. */
async function sumBalances(view: ReadView, assets: Iterable<string>): Promise<Map<string, Balance>> {
  const sums = new Map<string, Balance>();
  for (const symbol of assets) sums.set(symbol, zeroBalance);
  for await (const [key, value] of view.entries({ gte: keys.balancePrefix, lt: prefixEnd(keys.balancePrefix), limit: Number.MAX_SAFE_INTEGER })) {
    const symbol = key.slice(key.lastIndexOf('/') + 1);
    const sum = sums.get(symbol);
    assert(sum !== undefined, `balance ${key} is in a registered asset`);
    sums.set(symbol, plusBalance(sum, decodeBalanceText(value)));
  }
  return sums;
}

/** One asset's stored totals against the sum of its balances. */
export interface TotalsFinding {
  readonly asset: string;
  /** Null when the book keeps no totals for the asset. */
  readonly stored: Balance | null;
  readonly summed: Balance;
}

export interface TotalsReport {
  /** Every stored total equals the sum of its balances, layer by layer, and sums to zero. */
  readonly ok: boolean;
  readonly assets: readonly TotalsFinding[];
}

export const sameBalance = (a: Balance, b: Balance): boolean => a.available === b.available && a.reserved === b.reserved && a.encumbered === b.encumbered;

/**
 * The full check of the trial balance, for `ledgerd check` (on a closed book's store,
 * or a snapshot): sums every balance of every registered asset and compares each
 * asset's layers with its stored totals. Reads the whole of `bal/`; the kernel never
 * calls it while deciding.
 */
export async function verifyTotals(view: ReadView): Promise<TotalsReport> {
  const symbols = [...(await loadAssets(view)).keys()].sort();
  const summed = await sumBalances(view, symbols);
  const texts = await view.getMany(symbols.map(keys.tb));
  const findings = symbols.map((asset, i): TotalsFinding => ({ asset, stored: texts[i] === undefined ? null : decodeBalanceText(texts[i]!), summed: summed.get(asset)! }));
  const ok = findings.every((f) => f.stored !== null && sameBalance(f.stored, f.summed) && totalMinor(f.summed) === 0n);
  return { ok, assets: findings };
}
