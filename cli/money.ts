/**
 * Amounts for people (CONTRACT 11): minor-unit strings shown in major units with the asset's
 * symbol, `50000` USD (precision 2) as `500.00 USD`. bigint arithmetic only, never a JS number;
 * `--json` never passes here.
 */
import type { Asset } from './api.js';
import type { LedgerClient } from './client.js';

const minorText = /^-?\d+$/;

/** `amountMinor` in major units with `precision` decimals (a leading `-` kept). */
export function majorUnits(amountMinor: string, precision: number): string {
  if (!minorText.test(amountMinor) || !Number.isInteger(precision) || precision < 0) return amountMinor;
  const minor = BigInt(amountMinor);
  const magnitude = minor < 0n ? -minor : minor;
  const unit = 10n ** BigInt(precision);
  const whole = (magnitude / unit).toString();
  const fraction = precision === 0 ? '' : `.${(magnitude % unit).toString().padStart(precision, '0')}`;
  return `${minor < 0n ? '-' : ''}${whole}${fraction}`;
}

/** How a view shows an amount of an asset: as the minor-unit string by default, or `Money.show`. */
export type AmountText = (amountMinor: string, asset: string) => string;
export const minorUnitsText: AmountText = (amountMinor) => amountMinor;

/** The asset registry's precisions, read once per invocation when a view shows money. */
export class Money {
  private constructor(private readonly precisions: ReadonlyMap<string, number>) {}

  static async read(client: LedgerClient): Promise<Money> {
    const assets = await client.get<Asset[]>('/v1/assets');
    return new Money(new Map(assets.map((a) => [a.id, a.precision])));
  }

  /** `500.00 USD`; an asset the registry does not list is shown in minor units, saying so. */
  readonly show: AmountText = (amountMinor, asset) => {
    const precision = this.precisions.get(asset);
    return precision === undefined ? `${amountMinor} ${asset} (minor units)` : `${majorUnits(amountMinor, precision)} ${asset}`;
  };

  /** For a view on a terminal: amounts in major units (the registry read once); none for programs. */
  static async forPeople(machine: boolean, client: LedgerClient): Promise<AmountText> {
    return machine ? minorUnitsText : (await Money.read(client)).show;
  }
}
