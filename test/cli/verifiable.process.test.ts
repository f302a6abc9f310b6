/**
 * The verifiable book with the built `ledgerctl` against a real `ledgerd`: checkpoints
 * create, wait, list, show and export; disclosures create, show and verify, online and
 * offline with no service at all; a changed byte or another clerk key fails with exit 1.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { independentlyVerify } from '../support/independent-verifier.js';
import { accounts } from './support/book.js';
import { ledgerctl } from './support/ledgerctl.js';
import { useBook } from './support/use-book.js';

const book = useBook();
const dir = mkdtempSync(join(tmpdir(), 'ledgerctl-verifiable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('checkpoints and disclosures', () => {
  it('takes a checkpoint, waits for it to be final, discloses on it, and verifies online and offline', async () => {
    const created = await ledgerctl(['checkpoints', 'create', '--client-key', 'cp-a', '--field', 'result.anchoring.checkpoint.number'], book.env);
    expect(created.code, created.stderr).toBe(0);
    const number = created.stdout.trim();
    expect(number).toBe('1');
    const waited = await ledgerctl(['checkpoints', 'wait', number, '--timeout-ms', '20000'], book.env);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.json()).toMatchObject({ number: 1, status: 'final' });
    expect((await ledgerctl(['checkpoints', 'show', '1', '--field', 'status'], book.env)).stdout.trim()).toBe('final');
    expect((await ledgerctl(['checkpoints', 'list'], book.env)).json().items.map((c: any) => c.number)).toEqual([1]);

    const assertion = JSON.stringify({ shape: 'holds_at_least', amount: '100000', asset: 'USD', kind: 'available' });
    const made = await ledgerctl(
      ['disclosures', 'create', '--subject', accounts.alice, '--assertion', assertion, '--legal-obligation', 'audit 7', '--recipient-reference', 'cd'.repeat(32), '--out', join(dir, 'proof.hex'), '--client-key', 'd-1'],
      book.env,
    );
    expect(made.code, made.stderr).toBe(0);
    const proof = `@${join(dir, 'proof.hex')}`;
    const shown = await ledgerctl(['disclosures', 'show', proof], {});
    expect(shown.code).toBe(0);
    expect(shown.json()).toMatchObject({ subject: accounts.alice, checkpoint: { number: 1 } });

    const online = await ledgerctl(['disclosures', 'verify', proof], book.env);
    expect(online.code, online.stderr).toBe(0);
    expect(online.json()).toMatchObject({ passed: true });

    const exported = await ledgerctl(['checkpoints', 'export', '--out', join(dir, 'checkpoints.json')], book.env);
    expect(exported.code, exported.stderr).toBe(0);
    writeFileSync(join(dir, 'clerk.pub'), readFileSync(join(book.daemon.dataDir, 'clerk.pub')));
    // The independent verifier agrees, from the exported file alone.
    independentlyVerify(readFileSync(join(dir, 'proof.hex'), 'utf8').trim(), JSON.parse(readFileSync(join(dir, 'checkpoints.json'), 'utf8')));
    await book.daemon.stop();

    // No service at all from here on.
    const offline = ['disclosures', 'verify', proof, '--offline', '--clerk-key', `@${join(dir, 'clerk.pub')}`, '--checkpoints', join(dir, 'checkpoints.json')];
    const passed = await ledgerctl([...offline, '-o', 'table'], {});
    expect(passed.code, passed.stderr).toBe(0);
    expect(passed.stdout).toMatch(/^parse: ok\nsignature: ok\ncheckpoint: ok\nproofs: ok\nassertion: ok.*\npassed\n$/s);

    const hex = readFileSync(join(dir, 'proof.hex'), 'utf8').trim();
    const i = hex.length / 2;
    const changed = hex.slice(0, i) + (hex[i] === '0' ? '1' : '0') + hex.slice(i + 1);
    writeFileSync(join(dir, 'changed.hex'), changed);
    const failed = await ledgerctl(['disclosures', 'verify', `@${join(dir, 'changed.hex')}`, ...offline.slice(3)], {});
    expect(failed.code).toBe(1);
    expect(failed.json().passed).toBe(false);

    const otherKey = await ledgerctl(['disclosures', 'verify', proof, '--offline', '--clerk-key', 'ab'.repeat(32), '--checkpoints', join(dir, 'checkpoints.json')], {});
    expect(otherKey.code).toBe(1);
    expect(otherKey.json().report).toMatch(/signature: failed/);

    const file = JSON.parse(readFileSync(join(dir, 'checkpoints.json'), 'utf8'));
    file.checkpoints[0].kernel_root = 'ff'.repeat(32);
    writeFileSync(join(dir, 'forged.json'), JSON.stringify(file));
    const forged = await ledgerctl(['disclosures', 'verify', proof, '--offline', '--clerk-key', `@${join(dir, 'clerk.pub')}`, '--checkpoints', join(dir, 'forged.json')], {});
    expect(forged.code).toBe(2);
    expect(forged.stderr).toMatch(/commitment does not follow/);
    expect((await ledgerctl(['disclosures', 'verify', proof, '--offline'], {})).code).toBe(2);
  });
});
