/**
 * An amount of minor units in the asset's major units (`50000` at precision 2: `500.00`), bigint
 * arithmetic only. The kernel's refusal descriptions and the CLI's tables (cli/money.ts) write
 * amounts with it, so a person reads one convention everywhere.
 */
import { assert } from './assert.js';

export function majorUnitsOf(amountMinor: bigint, precision: number): string {
  assert(Number.isInteger(precision) && precision >= 0, 'a precision is a whole number of decimal places');
  const magnitude = amountMinor < 0n ? -amountMinor : amountMinor;
  const unit = 10n ** BigInt(precision);
  const fraction = precision === 0 ? '' : `.${(magnitude % unit).toString().padStart(precision, '0')}`;
  return `${amountMinor < 0n ? '-' : ''}${magnitude / unit}${fraction}`;
}

/** `500.00 USD`: what a description says of an amount of a registered asset. */
export const moneyText = (amountMinor: bigint, asset: string, precision: number): string => `${majorUnitsOf(amountMinor, precision)} ${asset}`;
