/**
 * Amounts for people (CONTRACT 11), in one place: minor-unit strings shown in major units with the
 * asset's symbol, `50000` USD (precision 2) as `500.00 USD`, and amount flags read either way
 * (`--amount 50000`, `--amount 500.00`, `--amount "500.00 USD"`). bigint arithmetic only, never a
 * JS number or float; `--json` never passes here and always carries the API's minor-unit strings.
 */
import { assetPrecisionMax, majorUnitsOf } from '../src/major-units.js';
import type { Asset } from './api.js';
import type { LedgerClient } from './client.js';
import type { Context } from './context.js';
import { UsageError } from './errors.js';
import { amountTextCharsMax, registryRereadMs } from './limits.js';

const minorText = /^-?\d+$/;

/** A precision ledgerd can hold; a service answering another (hostile, broken) gets its amounts shown as they came. */
const isPrecision = (precision: unknown): precision is number => Number.isInteger(precision) && (precision as number) >= 0 && (precision as number) <= assetPrecisionMax;

/** `amountMinor` in major units with `precision` decimals (a leading `-` kept); text that is no amount is returned as it is. */
export function majorUnits(amountMinor: string, precision: number): string {
  if (!minorText.test(amountMinor) || !isPrecision(precision)) return amountMinor;
  return majorUnitsOf(BigInt(amountMinor), precision);
}

/** How a view shows an amount of an asset: as the minor-unit string by default, or `Money.show`. */
export type AmountText = (amountMinor: string, asset: string) => string;
export const minorUnitsText: AmountText = (amountMinor) => amountMinor;

/** An amount whose asset is not known (a grant's bound over several assets): minor units, saying so. */
export const minorUnitsNamed = (amountMinor: string): string => `${amountMinor} (minor units)`;

type Precisions = ReadonlyMap<string, number>;

const precisionsOf = async (client: LedgerClient): Promise<Precisions> => {
  const assets = await client.get<Asset[]>('/v1/assets');
  return new Map(Array.isArray(assets) ? assets.filter((a) => isPrecision(a?.precision)).map((a) => [a.id, a.precision]) : []);
};

/** `500.00 USD`; an asset the registry does not list is shown in minor units, saying so. */
const shown = (precisions: Precisions, amountMinor: string, asset: string): string => {
  const precision = precisions.get(asset);
  return precision === undefined ? `${amountMinor} ${asset} (minor units)` : `${majorUnits(amountMinor, precision)} ${asset}`;
};

/** The asset registry's precisions, read once per invocation when a view shows or reads money. */
export class Money {
  private constructor(private readonly precisions: Precisions) {}

  static async read(client: LedgerClient): Promise<Money> {
    return new Money(await precisionsOf(client));
  }

  /** The registry, or (when it cannot be read) none: every amount then shows in minor units, saying so. */
  static async readOrNone(client: LedgerClient): Promise<Money> {
    return Money.read(client).catch(() => new Money(new Map()));
  }

  /** `500.00 USD`; an asset the registry does not list is shown in minor units, saying so. */
  readonly show: AmountText = (amountMinor, asset) => shown(this.precisions, amountMinor, asset);

  precisionOf(asset: string): number | undefined {
    return this.precisions.get(asset);
  }

  /** For a view on a terminal: amounts in major units (the registry read once); none for programs. */
  static async forPeople(machine: boolean, client: LedgerClient): Promise<AmountText> {
    return machine ? minorUnitsText : (await Money.read(client)).show;
  }

  /**
   * For a view that outlives one reading (the dashboard): the registry is read now and again, at
   * most every `registryRereadMs`, while it could not be read (the service down at start) or lacks
   * an asset shown (registered since). Until then an amount shows as `…`, never in other units.
   */
  static following(client: LedgerClient, nowMs: () => number = Date.now): AmountText {
    let precisions: Precisions | null = null;
    let readAtMs = -Infinity;
    let reading = false;
    const reread = () => {
      if (reading || nowMs() - readAtMs < registryRereadMs) return;
      reading = true;
      readAtMs = nowMs();
      precisionsOf(client).then(
        (read) => (precisions = read),
        () => undefined,
      ).finally(() => (reading = false));
    };
    reread();
    return (amountMinor, asset) => {
      if (precisions === null || !precisions.has(asset)) reread();
      return precisions === null ? '…' : shown(precisions, amountMinor, asset);
    };
  }
}

/** An amount as written on the command line: minor units (bare digits), or major units (a decimal point or a symbol). */
export type WrittenAmount = { minor: string } | { whole: string; fraction: string; symbol: string | null };

const majorWritten = /^(?:([A-Z][A-Z0-9]{0,15})\s*)?(\d+)(?:\.(\d+))?(?:\s*([A-Z][A-Z0-9]{0,15}))?$/;

/**
 * Bare digits are minor units, as they always were (scripts keep working); `10.00`, `10 USD`,
 * `10.00 USD` or `USD 10.00` are major units. Text that is neither is passed on as written: the
 * service judges it (ERR-MalformedCommand), as it judges every amount's bounds.
 */
export function writtenAmount(flag: string, text: string): WrittenAmount {
  if (text.length > amountTextCharsMax) throw new UsageError(`${flag} must be at most ${amountTextCharsMax} characters`);
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return { minor: trimmed };
  const m = majorWritten.exec(trimmed);
  if (m === null || (m[1] !== undefined && m[4] !== undefined) || (m[3] === undefined && m[1] === undefined && m[4] === undefined)) return { minor: text };
  return { whole: m[2]!, fraction: m[3] ?? '', symbol: m[1] ?? m[4] ?? null };
}

/** Major units of an asset of `precision` decimals as minor units; more decimals than it has: a usage error. */
export function minorOfMajor(flag: string, written: { whole: string; fraction: string }, asset: string, precision: number): string {
  if (written.fraction.length > precision) {
    throw new UsageError(`${flag} ${written.whole}.${written.fraction}: ${asset} has ${precision} decimal place${precision === 1 ? '' : 's'}`);
  }
  return (BigInt(written.whole) * 10n ** BigInt(precision) + BigInt(written.fraction.padEnd(precision, '0') || '0')).toString();
}

/** Where an amount flag's asset comes from, when its text names none: a flag's value, or (as for a capture) found on asking. */
export type AssetOfAmount = string | (() => Promise<string>) | undefined;

/**
 * An amount flag's value as the minor-unit string the API takes. The registry is read only for
 * major units (bare digits go out as written, with no extra request). A symbol in the text must
 * agree with the asset the command names.
 */
export async function amountMinorOf(ctx: Context, flag: string, text: string, assetOf: AssetOfAmount): Promise<string> {
  const written = writtenAmount(flag, text);
  if ('minor' in written) return written.minor;
  const named = typeof assetOf === 'function' ? await assetOf() : assetOf;
  if (written.symbol !== null && named !== undefined && written.symbol !== named) throw new UsageError(`${flag} ${text} is in ${written.symbol}, but the asset is ${named}`);
  const asset = written.symbol ?? named;
  if (asset === undefined) throw new UsageError(`${flag} ${text}: major units need the asset; write it with its symbol ("${text} USD") or give minor units`);
  const precision = (await Money.read(ctx.client())).precisionOf(asset);
  if (precision === undefined) throw new UsageError(`${flag} ${text}: the service lists no asset ${asset}; give minor units`);
  return minorOfMajor(flag, written, asset, precision);
}

/** What every amount flag's help says of the two ways to write it. */
export const amountHelp = 'minor units as a bare integer (1050), or major units with a decimal point or the symbol (10.50, "10.50 USD")';
