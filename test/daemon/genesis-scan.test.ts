/**
 * The genesis file's scanner (daemon/genesis-scan.ts, issue 28) refuses what the
 * stream-json reader before it refused, with the same messages (the rows below are that
 * reader's), and reads entries the same: escapes resolved, bad UTF-8 as U+FFFD, a
 * leading byte-order mark dropped, values cut by the reader's chunks read whole.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openGenesisFile } from '../../daemon/genesis-file.js';
import { Refused } from '../../src/errors.js';
import { useTempDirs } from './support.js';

const newDir = useTempDirs();

/** The sections a file lists, and every entry of each, or the refusal. */
async function read(content: string | Buffer): Promise<unknown> {
  const file = join(newDir(), 'genesis.json');
  writeFileSync(file, content);
  const genesis = await openGenesisFile(file);
  try {
    const sections = await genesis.sections();
    const entries: Record<string, unknown[]> = {};
    for (const section of sections) {
      entries[section] = [];
      for await (const batch of genesis.entries(section)) entries[section].push(...batch);
    }
    return { sections, entries };
  } catch (error) {
    if (error instanceof Refused) return error.refusal.description;
    throw error;
  } finally {
    await genesis.close();
  }
}

const refusals: [string, string][] = [
  ["", "genesis document: is not JSON (Parser has expected a value)"],
  ["[]", "genesis document: must be an object"],
  ["{\"assets\":[]} x", "genesis document: is not JSON (Parser cannot parse input: unexpected characters)"],
  ["\"x\"", "genesis document: must be an object"],
  ["{\"assets\":1}", "genesis assets: must be an array"],
  ["{\"assets\":{}}", "genesis assets: must be an array"],
  ["{\"assets\":[01]}", "genesis document: is not JSON (Parser cannot parse input: expected ',')"],
  ["{\"assets\":[1.]}", "genesis document: is not JSON (Parser cannot parse input: expected a fractional part of a number)"],
  ["{\"assets\":[-]}", "genesis document: is not JSON (Parser cannot parse input: expected a starting digit)"],
  ["{\"assets\":[1e]}", "genesis document: is not JSON (Parser cannot parse input: expected an exponent part of a number)"],
  ["{\"assets\":[{\"a\":1,\"a\":2}]}", "genesis assets[0]: member a appears twice"],
  ["{\"assets\":[\"\\x\"]}", "genesis document: is not JSON (Parser cannot parse input: escaped characters)"],
  ["{\"assets\":[\"a\tb\"]}", "genesis document: is not JSON (Parser cannot parse input: escaped characters)"],
  ["{\"assets\":[true,false,null,tru]}", "genesis document: is not JSON (Parser cannot parse input: expected a value)"],
  ["{\"assets\":[],\"assets\":[]}", "genesis assets: appears twice (one section of each name)"],
  ["{\"ledgers\":[]}", "genesis ledgers: is not a genesis section"],
  ["{\"assets\":[],", "genesis document: is not JSON (Parser cannot parse input: expected an object key)"],
  ["{\"assets\":[", "genesis document: is not JSON (Parser has expected a value)"],
  ["{\"assets\":[\"abc", "genesis document: is not JSON (Parser has expected a string value)"],
  ["{\"assets\":[{\"a\":1,}]}", "genesis document: is not JSON (Parser cannot parse input: unexpected token '}')"],
  ["{\"assets\":[1,]}", "genesis document: is not JSON (Parser cannot parse input: unexpected token ']')"],
  ["{\"assets\" []}", "genesis document: is not JSON (Parser cannot parse input: expected ':')"],
  ["{\"assets\":[{1:2}]}", "genesis document: is not JSON (Parser cannot parse input: expected an object key)"],
  ["{\"assets\":[{\"id\":\"GBP\"}", "genesis document: is not JSON (Parser cannot parse input: expected ',')"],
  ["{\"assets\":[{\"a\"", "genesis document: is not JSON (Parser cannot parse input: expected ':')"],
];

describe('the genesis scanner', () => {
  it.each(refusals)('refuses %j as the reader before it did', async (text, refusal) => {
    expect(await read(text)).toBe(refusal);
  });

  it('refuses values past their bound, naming the entry', async () => {
    const bound = 'holds a string, member name or number longer than 4096 characters';
    expect(await read(`{"identities":["${'x'.repeat(4097)}"]}`)).toBe(`genesis identities[0]: ${bound}`);
    expect(await read(`{"identities":["a",${'9'.repeat(4097)}]}`)).toBe(`genesis identities[1]: ${bound}`);
    expect(await read(`{"archived":[{"source":"${'\\u00e9'.repeat(4097)}"}]}`)).toBe(`genesis archived[0]: ${bound}`);
    expect(await read(`{"identities":["${'x'.repeat(4096)}"]}`)).toEqual({ sections: ['identities'], entries: { identities: ['x'.repeat(4096)] } });
  });

  it('reads entries whole across its chunks, escapes resolved, bad UTF-8 as U+FFFD, a byte-order mark dropped', async () => {
    const ids = Array.from({ length: 120_000 }, (_, i) => `did:ledger:id:g${i}é`);
    const head = `{"identities":${JSON.stringify(ids)},"aliases":[{"source":"o\\u0041\\n","name":"\\ud83d\\ude00","n":-1.5e2,"t":[true,null],"bad":"a`;
    const file = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(head), Buffer.from([0xff]), Buffer.from('b"}]}')]);
    const { sections, entries } = (await read(file)) as { sections: string[]; entries: Record<string, unknown[]> };
    expect(sections).toEqual(['identities', 'aliases']);
    expect(entries.identities).toEqual(ids);
    expect({ ...(entries.aliases![0] as object) }).toEqual({ source: 'oA\n', name: '😀', n: -150, t: [true, null], bad: 'a\ufffdb' });
  });

  it('builds an entry naming __proto__ without a prototype, so the member is refused rather than taken', async () => {
    const { entries } = (await read('{"assets":[{"__proto__":{"id":"GBP"}}]}')) as { entries: Record<string, Record<string, unknown>[]> };
    expect(Object.keys(entries.assets![0]!)).toEqual(['__proto__']);
  });
});
