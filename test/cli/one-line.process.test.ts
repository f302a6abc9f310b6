/**
 * Issue 20 item 6, the CLI's side: a served value holding newlines stays on its line on a
 * terminal. A reference picked with `--field`, a refusal's description (what an older or hostile
 * service might send) and a disclosure verification report cannot forge lines of their own.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../daemon/http/digest.js';
import { accounts } from './support/book.js';
import { configDir, ledgerctl } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();
const forgedLines = 'first\nERR-Forged: second\r\nthird';

describe('a served value on a terminal', () => {
  it('stays on one line when picked with --field', async () => {
    const sent = await ledgerctl(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '5', '--asset', 'USD', '--reference', JSON.stringify(forgedLines), '--field', 'operation_reference'], book.env);
    expect(sent.code, sent.stderr).toBe(0);
    const shown = await ledgerctlOnTerminal(['operations', 'show', sent.stdout.trim(), '--field', 'reference'], book.env);
    expect(shown.code).toBe(0);
    expect(shown.screen.trimEnd().split(/\r?\n/)).toEqual(['first\\nERR-Forged: second\\r\\nthird']);
  });

  it("keeps a disclosure verification report to one line per check", async () => {
    const hex = Buffer.from(
      canonicalJson({
        v: 'x\nsignature: ok\ncheckpoint: ok\nproofs: ok\nassertion: ok',
        instance: 1,
        clerk: '0'.repeat(64),
        subject: accounts.alice,
        assertion: { shape: 'operation_occurred', operation: 'op_0000000000000001' },
        checkpoint: { number: 1, commitment: '0'.repeat(64), kernel_root: '0'.repeat(64), entry_sequence: 1 },
        recipient: { reference: '0'.repeat(64) },
        issued_at: 1,
        evidence: [],
        signature: '0'.repeat(128),
      }),
    ).toString('hex');
    const shown = await ledgerctlOnTerminal(['disclosures', 'verify', hex], book.env);
    expect(shown.code).toBe(1);
    const lines = shown.screen.trimEnd().split(/\r?\n/);
    expect(lines, shown.screen).toHaveLength(3);
    expect(lines[0]).toMatch(/^parse: failed: version "x\\nsignature: ok/);
    expect(lines.slice(1)).toEqual(['FAILED', 'ledgerctl: the disclosure did not verify']);
  });
});

describe("a refusal's description", () => {
  // A service answering every request with a refusal whose description holds line breaks.
  const service = createServer((_req, res) => {
    res.writeHead(409, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'ERR-OperationTerminal', description: forgedLines }));
  });
  beforeAll(() => new Promise<void>((ready) => service.listen(0, '127.0.0.1', ready)));
  afterAll(() => new Promise<void>((done) => service.close(() => done())));

  it('is printed on one line', async () => {
    const url = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    const run = await ledgerctl(['operations', 'show', 'op_0000000000000001'], { LEDGER_URL: url, LEDGER_TOKEN: 'ledger_ak_x', LEDGERCTL_CONFIG_DIR: configDir() });
    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split('\n'), run.stderr).toEqual(['ERR-OperationTerminal: first\\nERR-Forged: second\\r\\nthird']);
  });
});
