/**
 * Hostile genesis files (issue 21, items 4-7 and 9), given to the real `ledgerd init`:
 * what two JSON readers would read differently (a repeated section, a repeated member),
 * values of the wrong type or past their bounds (deep nesting, huge strings, endless
 * entries), balances past 2^128 − 1, files that are pipes, and alias names carrying
 * terminal controls. Each is refused whole (CONTRACT 2), exit 3, naming the entry, and
 * leaves nothing behind: no book, no half-built `book.init/`, no keys.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { genesisEntryCharsMax, genesisEntryDepthMax, genesisValueCharsMax } from '../../daemon/constants.js';
import { ledgerd, ledgerdRun, useTempDirs } from './support.js';

const newDir = useTempDirs();
const max = ((1n << 128n) - 1n).toString();

const gbp = { id: 'GBP', kind: 'fiat', precision: 2 };
const treasury = (name: string, limit = '1000') => ({ account: `did:ledger:acct:${name}`, owner: 'did:ledger:id:operator', kind: 'treasury', treasury_limits: { GBP: limit } });
const customer = (name: string) => ({ account: `did:ledger:acct:${name}`, owner: 'did:ledger:id:operator', kind: 'customer' });
const opening = (name: string, amount: string, direction: 'debit' | 'credit') => ({ account: `did:ledger:acct:${name}`, asset: 'GBP', amount, direction });

/** `ledgerd init` on a file holding `text`: refused with exit 3, its message containing `named`, nothing left in the data dir. */
async function refusedWhole(text: string, named: string): Promise<string> {
  const dir = newDir();
  const file = join(dir, 'genesis.json');
  writeFileSync(file, text);
  const data = join(dir, 'data');
  const run = await ledgerdRun(['init', '--data-dir', data, '--genesis', file]);
  expect(run.stderr).toContain(named);
  expect(run.code).toBe(3);
  expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  expect(existsSync(data) ? readdirSync(data) : []).toEqual([]);
  return run.stderr;
}

/** `ledgerd init` with `genesis` given as a path, ended by the test after `waitMs` if it has not ended itself. */
function initWithin(data: string, genesis: string, waitMs: number): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [ledgerd, 'init', '--data-dir', data, '--genesis', genesis], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), waitMs);
  return new Promise((done) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    }),
  );
}

describe('ledgerd init refuses what two JSON readers would read differently', () => {
  it('refuses a section given twice (JSON.parse and jq keep the last, a stream the first)', async () => {
    const doc = `{"assets":[${JSON.stringify(gbp)}],"accounts":[${JSON.stringify(treasury('t'))},${JSON.stringify(customer('a'))}],` +
      `"openings":[${JSON.stringify(opening('t', '5', 'debit'))},${JSON.stringify(opening('a', '5', 'credit'))}],"openings":[]}`;
    await refusedWhole(doc, 'genesis openings: appears twice');
  });

  it('refuses a member given twice in an entry, naming the entry', async () => {
    const doc = `{"assets":[${JSON.stringify(gbp)}],"accounts":[${JSON.stringify(treasury('t'))},${JSON.stringify(customer('a'))}],` +
      `"openings":[${JSON.stringify(opening('t', '5', 'debit'))},{"account":"did:ledger:acct:a","asset":"GBP","amount":"5","direction":"credit","amount":"7"}]}`;
    await refusedWhole(doc, 'genesis openings[1]: member amount appears twice');
  });
});

describe('ledgerd init checks the type and the size of every value', () => {
  it('refuses a deeply nested value by its entry, without exhausting the stack', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const stderr = await refusedWhole(`{"assets":[${JSON.stringify(gbp)},{"id":"EUR","kind":"fiat","precision":2,"location":${deep}}]}`, `genesis assets[1]: nests deeper than ${genesisEntryDepthMax} levels`);
    expect(stderr).not.toContain('call stack');
  });

  it('refuses a location that is not a string, rather than storing "[object Object]"', async () => {
    await refusedWhole(JSON.stringify({ assets: [{ ...gbp, location: { at: 1 } }] }), 'genesis assets[0].location: must be null or 32 bytes of lowercase hex');
  });

  it('refuses a member the entry does not have, naming it', async () => {
    await refusedWhole(JSON.stringify({ assets: [gbp], accounts: [{ ...customer('a'), balance: '5' }] }), 'genesis accounts[0]: member balance is not one of');
  });

  it('refuses a huge string without reading it whole, naming the entry and the bound', async () => {
    const doc = `{"assets":[${JSON.stringify(gbp)}],"accounts":[${JSON.stringify(customer('a'))}],"aliases":[{"source":"old","account":"did:ledger:acct:a","name":"${'n'.repeat(32 * 1024 * 1024)}"}]}`;
    await refusedWhole(doc, `genesis aliases[0]: holds a string, member name or number longer than ${genesisValueCharsMax} characters`);
  });

  it('refuses an endless number and an entry of endless members, each by its bound', async () => {
    await refusedWhole(`{"assets":[{"id":"GBP","kind":"fiat","precision":${'9'.repeat(8 * 1024 * 1024)}}]}`, `genesis assets[0]: holds a string, member name or number longer than ${genesisValueCharsMax} characters`);
    const members = Array.from({ length: 200_000 }, (_, i) => `"m${i}":"${'x'.repeat(16)}"`).join(',');
    await refusedWhole(`{"assets":[${JSON.stringify(gbp)}],"accounts":[${JSON.stringify(customer('a'))},{${members}}]}`, `genesis accounts[1]: is longer than ${genesisEntryCharsMax} characters`);
  });
});

describe('ledgerd init keeps balances within 2^128 - 1', () => {
  it('refuses openings that leave one balance past the ceiling, naming the opening', async () => {
    const doc = { assets: [gbp], accounts: [treasury('t', max), treasury('u', max), customer('a')], openings: [opening('t', max, 'debit'), opening('u', max, 'debit'), opening('a', max, 'credit'), opening('a', max, 'credit')] };
    await refusedWhole(JSON.stringify(doc), "genesis openings[3]: leaves did:ledger:acct:a's available balance in GBP past 2^128-1");
  });

  it('refuses openings that leave more than the ceiling held of an asset in all', async () => {
    const doc = { assets: [gbp], accounts: [treasury('t', max), treasury('u', max), customer('a'), customer('b')], openings: [opening('t', max, 'debit'), opening('u', max, 'debit'), opening('a', max, 'credit'), opening('b', max, 'credit')] };
    await refusedWhole(JSON.stringify(doc), 'genesis openings: leave more than 2^128-1 of GBP held in all');
  });
});

describe('ledgerd init reads a genesis file once, and only a regular one', () => {
  it('refuses a FIFO with no writer at once, leaving no book.init/', async () => {
    const dir = newDir();
    const fifo = join(dir, 'genesis.fifo');
    const made = spawn('mkfifo', [fifo]);
    expect(await new Promise((done) => made.once('close', done))).toBe(0);
    const data = join(dir, 'data');
    const run = await initWithin(data, fifo, 15_000);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`genesis file ${fifo} is not a regular file`);
    expect(existsSync(data) ? readdirSync(data) : []).toEqual([]);
  });

  it('refuses a pipe, as `--genesis <(…)` gives, plainly instead of with a parser message', async () => {
    const dir = newDir();
    const data = join(dir, 'data');
    const file = join(dir, 'genesis.json');
    writeFileSync(file, JSON.stringify({ assets: [gbp] }));
    const child = spawn('bash', ['-c', 'exec "$0" "$1" init --data-dir "$2" --genesis <(cat "$3")', process.execPath, ledgerd, data, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await new Promise((done) => child.once('close', done));
    clearTimeout(timer);
    expect(stderr).toMatch(/genesis file \/dev\/fd\/[0-9]+ is not a regular file \(a pipe, a socket or a device\)/);
    expect(code).toBe(3);
    expect(existsSync(data) ? readdirSync(data) : []).toEqual([]);
  });
});

describe('ledgerd init restricts alias names like ids', () => {
  const aliasDoc = (alias: Record<string, unknown>) => JSON.stringify({ assets: [gbp], accounts: [customer('a')], aliases: [{ source: 'old', name: 'a-1', account: 'did:ledger:acct:a', ...alias }] });

  it.each([
    ['a NUL', 'a\u0000b'],
    ['an escape sequence', 'a\u001b[2Jb'],
    ['a bidi override', 'a\u202eb'],
    ['a space', 'a b'],
    ['too many characters', 'n'.repeat(257)],
    ['nothing', ''],
  ])('refuses a name holding %s, naming the entry', async (_what, name) => {
    await refusedWhole(aliasDoc({ name }), 'genesis aliases[0].name: name must be 1-256 of A-Z a-z 0-9 . _ : @ / + -');
  });

  it('refuses an archived source holding a control, and never echoes what the file holds raw', async () => {
    await refusedWhole(JSON.stringify({ archived: [{ source: 'x\u001b]0;owned\u0007', name: 'gone' }] }), 'genesis archived[0].source: source must be 1-256');
    const stderr = await refusedWhole(JSON.stringify({ assets: [gbp], accounts: [{ ...customer('a'), [`\u001b[31m\u202e`]: 1 }] }), 'genesis accounts[0]: member "\\u001b[31m\\u202e" is not one of');
    expect(stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  });

  it('accepts a name of those characters at the bound', async () => {
    const dir = newDir();
    const file = join(dir, 'genesis.json');
    const name = `old:@x/y+z_1.2-3${'A'.repeat(256)}`.slice(0, 256);
    writeFileSync(file, aliasDoc({ name }));
    const run = await ledgerdRun(['init', '--data-dir', join(dir, 'data'), '--genesis', file]);
    // Only the summary line of the work (issue 25 item 8).
    expect(run.stderr).toMatch(/^ledgerd init: [\d,]+ entries written in \d+\.\d s \([\d,]+\/s\)\n$/);
    expect(run.code).toBe(0);
  });
});
