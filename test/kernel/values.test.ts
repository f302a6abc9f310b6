import { describe, expect, it } from 'vitest';
import { refusedWith } from '../support/refusals.js';
import { parseAccountId, parseAmountMinor, parseAssetSymbol, parseLimitMinor, parseReferenceJson } from '../../src/model/values.js';


describe('values parsed at the edge (CONTRACT 3)', () => {
  it.each([
    ['1', 'accepted'],
    ['340282366920938463463374607431768211455', 'accepted'],
    ['340282366920938463463374607431768211456', 'ERR-PrecisionExceeded'],
    ['99999999999999999999999999999999999999999999', 'ERR-PrecisionExceeded'],
    ['10.5', 'ERR-PrecisionExceeded'],
    ['0', 'ERR-ZeroAmount'],
    ['007', 'ERR-MalformedCommand'],
    ['-5', 'ERR-MalformedCommand'],
    ['1e3', 'ERR-MalformedCommand'],
    [' 1', 'ERR-MalformedCommand'],
    [12, 'ERR-MalformedCommand'],
  ])('amount %j is %s', (value, code) => {
    expect(refusedWith(() => parseAmountMinor(value))).toBe(code);
  });

  it('keeps amounts as bigint, exactly', () => {
    expect(parseAmountMinor('340282366920938463463374607431768211455')).toBe((1n << 128n) - 1n);
  });

  it.each([
    ['0', 'accepted'],
    ['1.5', 'ERR-PrecisionExceeded'],
    ['x', 'ERR-MalformedCommand'],
  ])('limit %j is %s', (value, code) => {
    expect(refusedWith(() => parseLimitMinor(value, 'limit'))).toBe(code);
  });

  it('accepts identifiers and symbols of the stated shapes only', () => {
    expect(refusedWith(() => parseAccountId('did:ledger:acct:A.b_c-9'))).toBe('accepted');
    expect(refusedWith(() => parseAccountId(`did:ledger:acct:${'a'.repeat(65)}`))).toBe('ERR-MalformedCommand');
    expect(refusedWith(() => parseAccountId('did:ledger:id:alice'))).toBe('ERR-MalformedCommand');
    expect(refusedWith(() => parseAccountId('did:ledger:acct:a/b'))).toBe('ERR-MalformedCommand');
    expect(refusedWith(() => parseAssetSymbol('USDC'))).toBe('accepted');
    expect(refusedWith(() => parseAssetSymbol('usd'))).toBe('ERR-MalformedCommand');
    expect(refusedWith(() => parseAssetSymbol('1USD'))).toBe('ERR-MalformedCommand');
    expect(refusedWith(() => parseAssetSymbol('A'.repeat(17)))).toBe('ERR-MalformedCommand');
  });

  it('keeps references as sent, up to 1024 bytes of UTF-8', () => {
    expect(parseReferenceJson('{ "a" : 1 }')).toBe('{ "a" : 1 }');
    expect(refusedWith(() => parseReferenceJson(`"${'é'.repeat(511)}"`))).toBe('accepted');
    expect(refusedWith(() => parseReferenceJson(`"${'é'.repeat(512)}"`))).toBe('ERR-MalformedCommand');
  });
});
