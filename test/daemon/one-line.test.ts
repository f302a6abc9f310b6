/**
 * Issue 20 item 6: what a caller sends cannot add lines to what the daemon reports. A disclosure
 * whose values hold newlines gets a verification report of one line per check run (no forged
 * `name: ok`); a refusal naming a caller's member keeps it on one line.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../daemon/http/digest.js';
import { refusalOf, useDaemon } from './support.js';

const shared = useDaemon({ alice: 1_000n, bob: 1_000n });
const alice = shared.as('alice');

const forged = 'x\nsignature: ok\ncheckpoint: ok\nproofs: ok\nassertion: ok';
/** A disclosure of the right members whose version (the first value the report names) forges passing lines. */
const disclosureHex = (v: unknown) =>
  Buffer.from(
    canonicalJson({
      v: v as string,
      instance: 1,
      clerk: '0'.repeat(64),
      subject: 'did:ledger:acct:alice',
      assertion: { shape: 'operation_occurred', operation: 'op_0000000000000001' },
      checkpoint: { number: 1, commitment: '0'.repeat(64), kernel_root: '0'.repeat(64), entry_sequence: 1 },
      recipient: { reference: '0'.repeat(64) },
      issued_at: 1,
      evidence: [],
      signature: '0'.repeat(128),
    }),
  ).toString('hex');

const checkLine = /^(parse|signature|checkpoint|proofs|liabilities|assertion): (ok|failed: .*)$/;

describe('a disclosure verification report', () => {
  for (const v of [forged, 'x\r\nsignature: ok', 'x\u2028signature: ok', 'x\u0085signature: ok']) {
    it(`keeps a version of ${JSON.stringify(v.slice(0, 16))} on its line`, async () => {
      const hex = disclosureHex(v);
      {
        const r = await alice.get(`/v1/disclosures/verify?disclosure=${hex}`);
        expect(r.status, r.text).toBe(200);
        expect(r.body.passed).toBe(false);
        const lines = (r.body.report as string).split(/\r\n|\r|\n|\u2028|\u2029|\u0085/);
        expect(lines, r.body.report).toHaveLength(1);
        expect(lines[0]).toMatch(checkLine);
        expect(lines[0]).toMatch(/^parse: failed: version "x\\/);
      }
    });
  }
});

describe('a refusal naming what the caller sent', () => {
  it('keeps an unknown member on one line', async () => {
    const body = { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }], [`x\nERR-Forged: y`]: 1 };
    const r = await alice.post('/v1/transfers', body, undefined, { 'client-key': 'one-line-1' });
    expect(refusalOf(r).error).toBe('ERR-MalformedCommand');
    expect(r.body.description).not.toMatch(/[\r\n]/);
    expect(r.body.description).toContain('x\\nERR-Forged: y');
  });
});
