/**
 * cli/money.ts: major units from minor-unit strings and back, with bigint arithmetic only, and the
 * registry a long-running view (the dashboard) reads again when it started before ledgerd.
 */
import { describe, expect, it } from 'vitest';
import type { LedgerClient } from '../../cli/client.js';
import { UsageError } from '../../cli/errors.js';
import { Money, majorUnits, minorOfMajor, writtenAmount } from '../../cli/money.js';

describe('showing amounts', () => {
  it('writes minor units in major units at any precision, beyond a JS number', () => {
    expect(majorUnits('50000', 2)).toBe('500.00');
    expect(majorUnits('-5', 2)).toBe('-0.05');
    expect(majorUnits('7', 0)).toBe('7');
    expect(majorUnits('340282366920938463463374607431768211455', 8)).toBe('3402823669209384634633746074317.68211455');
    expect(majorUnits('not a number', 2)).toBe('not a number');
    // A precision no ledgerd holds (a hostile service's 10^9 would never finish): shown as it came.
    expect(majorUnits('5', 1_000_000_000)).toBe('5');
  });
});

describe('reading amount flags', () => {
  it('takes bare digits as minor units and a decimal point or a symbol as major units', () => {
    expect(writtenAmount('--amount', '1050')).toEqual({ minor: '1050' });
    expect(writtenAmount('--amount', '10.50')).toEqual({ whole: '10', fraction: '50', symbol: null });
    expect(writtenAmount('--amount', '10.50 USD')).toEqual({ whole: '10', fraction: '50', symbol: 'USD' });
    expect(writtenAmount('--amount', 'USD 10')).toEqual({ whole: '10', fraction: '', symbol: 'USD' });
    // Neither: sent as written, for the service to judge.
    for (const text of ['-5', '1e3', '10.', '.5', 'USD 10 EUR', '10,00']) expect(writtenAmount('--amount', text)).toEqual({ minor: text });
    expect(() => writtenAmount('--amount', '9'.repeat(81))).toThrow(UsageError);
  });

  it('converts major units at the precision, refusing more decimals than it has', () => {
    expect(minorOfMajor('--amount', { whole: '10', fraction: '5' }, 'USD', 2)).toBe('1050');
    expect(minorOfMajor('--amount', { whole: '0', fraction: '00000001' }, 'BTC', 8)).toBe('1');
    expect(minorOfMajor('--amount', { whole: '12', fraction: '' }, 'JPY', 0)).toBe('12');
    expect(minorOfMajor('--amount', { whole: '340282366920938463463374607431768211455', fraction: '' }, 'USD', 2)).toBe('34028236692093846346337460743176821145500');
    expect(() => minorOfMajor('--amount', { whole: '10', fraction: '505' }, 'USD', 2)).toThrow('--amount 10.505: USD has 2 decimal places');
    expect(() => minorOfMajor('--amount', { whole: '1', fraction: '5' }, 'JPY', 0)).toThrow('JPY has 0 decimal places');
  });
});

describe('a view that outlives one reading', () => {
  it('shows … while the registry cannot be read (ledgerd down at start), then major units, never minor', async () => {
    let nowMs = 0;
    let up = false;
    let reads = 0;
    const client = {
      get: async () => {
        reads++;
        if (!up) throw new Error('ECONNREFUSED');
        return [{ id: 'USD', precision: 2 }];
      },
    } as unknown as LedgerClient;
    const amount = Money.following(client, () => nowMs);
    await new Promise((r) => setImmediate(r));
    expect(amount('50000', 'USD')).toBe('…');
    up = true;
    // Not read again before the pause between reads is over.
    expect(amount('50000', 'USD')).toBe('…');
    expect(reads).toBe(1);
    nowMs = 5_000;
    amount('50000', 'USD');
    await new Promise((r) => setImmediate(r));
    expect(reads).toBe(2);
    expect(amount('50000', 'USD')).toBe('500.00 USD');
    // An asset registered since: read again (at most every 5 s), meanwhile said in minor units.
    expect(amount('7', 'EUR')).toBe('7 EUR (minor units)');
    expect(reads).toBe(2);
  });
});
