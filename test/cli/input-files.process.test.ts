/**
 * Files a flag names (`--legs FILE`, `-` for stdin, `@file` values) are read up to a bound,
 * then refused as a usage error (exit 2) without reading on or sending anything: a huge or
 * endless input cannot grow `ledgerctl` (docs/ledgerctl.md, Bounds).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inputFileBytesMax } from '../../cli/limits.js';
import { configDir, ledgerctl } from './support/ledgerctl.js';

const dir = mkdtempSync(join(tmpdir(), 'ledgerctl-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Nothing listens there: a command that got as far as sending would exit 3.
const env = () => ({ LEDGER_URL: 'http://127.0.0.1:9', LEDGER_TOKEN: 't', LEDGERCTL_CONFIG_DIR: configDir() });
const leg = { from: 'did:ledger:acct:a', to: 'did:ledger:acct:b', amount: '1', asset: 'USD', reference: 'x'.repeat(1000) };
/** A valid JSON array of legs just past the bound. */
const hugeLegs = JSON.stringify(Array.from({ length: Math.ceil(inputFileBytesMax / JSON.stringify(leg).length) + 1 }, () => leg));

describe('ledgerctl reads the files its flags name up to a bound', () => {
  it('refuses --legs FILE past the bound, exit 2, sending nothing', async () => {
    const file = join(dir, 'legs.json');
    writeFileSync(file, hugeLegs);
    const run = await ledgerctl(['transfers', 'create', '--legs', file], env());
    expect(run.stderr).toContain(`--legs ${file}: more than ${inputFileBytesMax} bytes, the bound of one input file`);
    expect(run.code).toBe(2);
  });

  it('refuses --legs - (stdin) past the bound, exit 2', async () => {
    const run = await ledgerctl(['transfers', 'create', '--legs', '-'], env(), hugeLegs);
    expect(run.stderr).toContain(`more than ${inputFileBytesMax} bytes, the bound of one input file`);
    expect(run.code).toBe(2);
  });

  it('refuses an @file value past the bound, exit 2', async () => {
    const file = join(dir, 'disclosure.hex');
    writeFileSync(file, 'ab'.repeat(inputFileBytesMax));
    const run = await ledgerctl(['disclosures', 'verify', `@${file}`], env());
    expect(run.stderr).toContain(`more than ${inputFileBytesMax} bytes, the bound of one input file`);
    expect(run.code).toBe(2);
  });
});
