import { describe, expect, it } from 'vitest';
import { RawJson, type Wire, stringifyWire } from '../../src/queries/wire.js';

describe('stringifyWire', () => {
  it('writes what JSON.stringify writes for values without raw JSON, keys in their order and undefined members left out', () => {
    const values: Wire[] = [
      null, 0, -1.5, 'plain', 'quote " backslash \\ newline \n tab \t \u0001 \u2028', true, [], {},
      { b: 1, a: [1, 'x', null, { c: false }], 'odd "key"\n': 'v', skipped: undefined },
      [[[]], [{}], { nested: { deeper: [1, 2, 3] } }],
    ];
    for (const value of values) expect(stringifyWire(value)).toBe(JSON.stringify(value));
  });

  it('splices raw JSON exactly as sent, at any depth', () => {
    const reference = new RawJson('{ "a" : [1,\r\n 2] }');
    expect(stringifyWire({ reference, list: [reference, new RawJson('7')], inner: { reference } })).toBe(
      '{"reference":{ "a" : [1,\r\n 2] },"list":[{ "a" : [1,\r\n 2] },7],"inner":{"reference":{ "a" : [1,\r\n 2] }}}',
    );
  });

  it('quotes any number of distinct keys (past the bound of remembered ones) correctly', () => {
    const wide: { [key: string]: Wire } = {};
    for (let i = 0; i < 2000; i++) wide[`key "${i}"`] = i;
    expect(stringifyWire(wide)).toBe(JSON.stringify(wide));
    expect(stringifyWire(wide)).toBe(JSON.stringify(wide));
  });
});
