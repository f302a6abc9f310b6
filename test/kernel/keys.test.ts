/**
 * The key layout (src/model/keys.ts): every top-level space listed once, none a prefix
 * of another (a range scan of one space never reads another's records), and every key
 * the code builds inside exactly one of them.
 */
import { describe, expect, it } from 'vitest';
import * as layout from '../../src/model/keys.js';
import { keySpaces, prefixEnd } from '../../src/model/keys.js';

/** Every top-level prefix, once (docs/architecture.md, Keys). A new space is added here too. */
const everySpace = [
  'meta/', 'tb/', 'asset/', 'id/', 'acct/', 'bal/', 'j/', 'jt/', 'aa/', 'op/', 'cmd/', 'ot/', 'ck/', 'x/', 'ev/',
  'alias/', 'arch/', 'cred/', 'tok/', 'tokx/', 'chal/', 'chalx/', 'grant/', 'gch/', 'gwin/', 'gh/', 'ghr/', 'gho/', 'ghro/',
  'gg/', 'gi/', 'gip/', 'party/', 'sl/', 'dref/', 'L/', 'mt/', 'cp/', 'cpi/', 'lt/', 'dck/', 'mem/', 'au/', 'prop/', 'propi/', 'propn/', 'apol/',
];

/** Every key (or key prefix) the layout module builds, from sample arguments. */
function everyKey(): string[] {
  const out: string[] = [];
  const take = (value: unknown) => {
    if (typeof value === 'string') out.push(value);
    // Every builder's arguments are numbers or text spliced in: 1 serves as either.
    else if (typeof value === 'function') out.push((value as (...args: unknown[]) => string)(...Array.from({ length: value.length }, () => 1)));
  };
  for (const [name, value] of Object.entries(layout)) {
    if (['keySpaces', 'expirySpaces', 'storeLayout', 'seqHex', 'parseSeqHex', 'prefixEnd', 'expiryKey', 'expiryScanEnd', 'ownedKey', 'spaceHolding'].includes(name)) continue;
    if (typeof value === 'object' && value !== null) for (const member of Object.values(value)) take(member);
    else take(value);
  }
  for (const space of Object.keys(layout.expirySpaces) as layout.ExpirySpace[]) {
    out.push(layout.expiryKey(space, 1, 'ab'), layout.expiryScanEnd(space, 1));
  }
  return out;
}

describe('key layout', () => {
  it('lists every top-level space once, each ending in /', () => {
    expect([...Object.values(keySpaces)].sort()).toEqual([...everySpace].sort());
    expect(new Set(everySpace).size).toBe(everySpace.length);
    for (const space of everySpace) expect(space).toMatch(/^[A-Za-z]+\/$/);
  });

  it('has no space that is a prefix of another, so no range scan of one reads another', () => {
    for (const a of everySpace) {
      for (const b of everySpace) {
        if (a === b) continue;
        expect(b.startsWith(a), `${a} is a prefix of ${b}`).toBe(false);
        // The scan [a, prefixEnd(a)) holds only keys starting with a.
        expect(b >= a && b < prefixEnd(a), `${b} falls in the range of ${a}`).toBe(false);
      }
    }
  });

  it('builds every key inside exactly one space', () => {
    const built = everyKey();
    expect(built.length).toBeGreaterThan(60);
    for (const key of built) {
      const spaces = everySpace.filter((space) => key.startsWith(space));
      expect(spaces, `${key} lies in one space`).toHaveLength(1);
    }
  });

  it('owns every record key it builds, and no key outside its spaces or its meta records', () => {
    for (const key of everyKey()) if (!everySpace.includes(key) && !key.endsWith('/')) expect(layout.ownedKey(key), key).toBe(true);
    for (const key of ['zzz/a', 'meta/zz', 'meta/', 'acct/', 'acct', '', 'Meta/head']) expect(layout.ownedKey(key), key).toBe(false);
    expect(layout.spaceHolding('acct/x')).toBe('acct/');
    expect(layout.spaceHolding('zzz/x')).toBe(null);
  });

  it('keeps the keys a replay compares byte for byte', () => {
    expect(layout.keys.balance('acct-1', 'EUR')).toBe('bal/acct-1/EUR');
    expect(layout.keys.journal(255)).toBe('j/00000000000000ff');
    expect(layout.keys.expiry(16, 'r')).toBe('x/0000000000000010/r');
    expect(layout.settlementKeys.pending(2, 'r')).toBe('sl/pend/0000000000000002/r');
    expect(layout.layerKeys.block(3)).toBe('L/b/0000000000000003');
    expect(layout.merkleKeys.node(10, 1)).toBe('mt/0a/0000000000000001');
    expect(layout.checkpointKeys.ingested).toBe('cpi/ingested');
    expect(layout.expiryKey('chalx', 1, 'ab')).toBe('chalx/0000000000000001/ab');
    expect(layout.keys.directReply('p', 'h')).toBe('dck/p/h');
  });
});
