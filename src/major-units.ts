/**
 * An amount of minor units in the asset's major units (`50000` at precision 2: `500.00`), bigint
 * arithmetic only. The kernel's refusal descriptions and the CLI's tables (cli/money.ts) write
 * amounts with it, so a person reads one convention everywhere.
 */
import { assert } from './assert.js';

/** An asset's precision, in decimal places: one byte, as the settlement layer carries decimals. */
export const assetPrecisionMax = 255;

export function majorUnitsOf(amountMinor: bigint, precision: number): string {
  assert(Number.isInteger(precision) && precision >= 0, 'a precision is a whole number of decimal places');
  const magnitude = amountMinor < 0n ? -amountMinor : amountMinor;
  const unit = 10n ** BigInt(precision);
  const fraction = precision === 0 ? '' : `.${(magnitude % unit).toString().padStart(precision, '0')}`;
  return `${amountMinor < 0n ? '-' : ''}${magnitude / unit}${fraction}`;
}

/** `500.00 USD`: what a description says of an amount of a registered asset. */
export const moneyText = (amountMinor: bigint, asset: string, precision: number): string => `${majorUnitsOf(amountMinor, precision)} ${asset}`;

/** Where a description finds an asset's precision (a decision's reads); one it cannot find is said in minor units. */
export interface PrecisionReads {
  asset?(symbol: string): { readonly precision: number } | undefined;
}

/** An amount as a refusal's description says it: `500.00 USD`, one convention with the CLI's (minor units, saying so, where the precision is not at hand). */
export function amountText(reads: PrecisionReads, amountMinor: bigint, symbol: string): string {
  const asset = reads.asset?.(symbol);
  return asset === undefined ? `${amountMinor} ${symbol} (minor units)` : moneyText(amountMinor, symbol, asset.precision);
}
