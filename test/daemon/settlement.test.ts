/**
 * Settlement flows through the daemon (CONTRACT 9, docs/settlement.md), the embedded
 * layer driven block by block: assets bound by attestation, deposits in, withdrawals
 * out, comparisons, observations, rescans, and the layer down.
 */
import { describe, expect, it } from 'vitest';
import { type Client, decided, refused, until, useDaemon } from './support.js';

const location = 'ab'.repeat(32);
const away = { account: 'cd'.repeat(32) };

const shared = useDaemon({ alice: 1000n, bob: 0n, carol: 50n }, { settlement: { blockIntervalMs: 0, finalityDepth: 2, instructionExpiryBlocks: 3 } });

const blocks = (op: Client, count: number) => op.post('/v1/ops/layer/blocks', { count });
const asset = async (op: Client, id: string) => ((await op.get('/v1/assets')).body as { id: string }[]).find((a) => a.id === id) as Record<string, unknown>;
const balance = async (who: Client, account: string, symbol = 'USD') =>
  ((await who.get(`/v1/accounts/${account}/balances`)).body.balances as { asset: string }[]).find((b) => b.asset === symbol) as Record<string, string> | undefined;
const op = (ref: string) => shared.as('operator').get(`/v1/operations/${ref}`);
const depositRef = async (account: string) => (await shared.as('operator').get(`/v1/accounts/${account}`)).body.deposit_ref as string;
const key = () => ({ 'client-key': `k-${Math.random().toString(36).slice(2)}` });

describe('settlement flows', () => {
  it('binds an asset once the layer attests it in a final block', async () => {
    const operator = shared.as('operator');
    expect(await refused(shared.as('alice').post('/v1/ops/assets/USD/binding', { location }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    expect(await refused(operator.post('/v1/ops/assets/USD/binding', { location: 'xyz' }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    // Deposits and withdrawals need a bound asset.
    expect(await refused(operator.post('/v1/ops/layer/deposits', { asset: 'USD', amount: '5', account_ref: location }))).toEqual({ status: 400, error: 'ERR-UnsupportedLeg' });
    const bind = await operator.post('/v1/ops/assets/USD/binding', { location });
    expect(bind.status).toBe(202);
    const bound = await decided(operator, bind.body.operation_reference);
    expect(bound.body.state).toBe('Completed');
    expect(bound.body.result.settlement.attestation).toEqual({ asset: 'USD', verdict: 'binding' });
    expect(await asset(operator, 'USD')).toMatchObject({ binding: 'binding', location });
    // The attestation request reaches the layer just after the decision; its block must be final (depth 2) before the asset is bound.
    let made = 0;
    while ((await asset(operator, 'USD')).binding !== 'bound') {
      expect(made, 'bound within 20 blocks').toBeLessThan(20);
      await blocks(operator, 1);
      made++;
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(made).toBeGreaterThanOrEqual(3);
  });

  it('credits a deposit once its block is final, and leaves one for no account unassociated', async () => {
    const operator = shared.as('operator');
    const ref = await depositRef('did:ledger:acct:alice');
    expect(ref).toMatch(/^[0-9a-f]{64}$/);
    const placed = await operator.post('/v1/ops/layer/deposits', { asset: 'USD', amount: '500', account_ref: ref }, undefined, key());
    expect(placed.status).toBe(200);
    const coordinate = placed.body.result.settlement.coordinate;
    expect(coordinate).toMatchObject({ instance: 1 });
    const stray = (await operator.post('/v1/ops/layer/deposits', { asset: 'USD', amount: '7', account_ref: 'ee'.repeat(32) }, undefined, key())).body.result.settlement.coordinate;
    await blocks(operator, 1);
    await new Promise((r) => setTimeout(r, 50));
    expect((await balance(operator, 'did:ledger:acct:alice'))!.available).toBe('1000');
    await blocks(operator, 2);
    await until(() => balance(operator, 'did:ledger:acct:alice'), (b) => b!.available === '1500');
    // Observing it again: duplicate; the stray one relates to no account.
    const again = await operator.post('/v1/ops/settlement/observations', { coordinate });
    expect((await decided(operator, again.body.operation_reference)).body.error.error).toBe('ERR-ObservationDuplicate');
    const strayAgain = await operator.post('/v1/ops/settlement/observations', { coordinate: stray });
    expect((await decided(operator, strayAgain.body.operation_reference)).body.error.error).toBe('ERR-ObservationUnassociated');
    expect(await refused(operator.post('/v1/ops/settlement/observations', { coordinate: { ...coordinate, digest: '00'.repeat(32) } }))).toEqual({ status: 409, error: 'ERR-EvidenceInsufficient' });
    expect(await refused(operator.post('/v1/ops/settlement/observations', { coordinate: { ...coordinate, seq: 999 } }))).toEqual({ status: 409, error: 'ERR-EvidenceInsufficient' });
    // The stray value is on the layer for no account: the comparison differs by it.
    const compared = (await operator.post('/v1/ops/settlement/comparisons', {}, undefined, key())).body.result.settlement.comparison;
    expect(compared.differs).toBe(true);
    expect(compared.rows).toEqual([{ asset: 'USD', book: '500', layer: '507', difference: '7', liabilities: null, liabilities_checkpoint: null, solvent: null }]);
    const rescan = (await operator.post('/v1/ops/settlement/rescans', { from: 1, to: 10 }, undefined, key())).body.result.settlement.rescan;
    expect(rescan).toEqual({ missing: [], unassociated: 1, unknown: [] });
  });

  it('withdraws: encumbered, Instructed, Submitted in a block, Completed once final', async () => {
    const operator = shared.as('operator');
    const alice = shared.as('alice');
    // Someone else's account: refused as a transfer out of it would be.
    const theirs = await alice.post('/v1/withdrawals', { account: 'did:ledger:acct:carol', amount: '10', asset: 'USD', destination: away });
    expect(theirs.status).toBe(403);
    const w = await alice.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '200', asset: 'USD', destination: away }, undefined, key());
    expect(w.status).toBe(202);
    const instructed = await decided(alice, w.body.operation_reference);
    expect(instructed.body.state).toBe('Instructed');
    const instruction = instructed.body.result.settlement.instruction;
    expect(instruction).toMatchObject({ amount: '200', asset: 'USD', destination: away, operation_reference: w.body.operation_reference, reserved: true });
    expect(instruction.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(instructed.body.moves).toEqual([{ from: 'did:ledger:acct:alice', to: null, amount: '200', asset: 'USD' }]);
    expect(await balance(operator, 'did:ledger:acct:alice')).toMatchObject({ available: '1300', encumbered: '200' });
    await blocks(operator, 1);
    await until(() => op(w.body.operation_reference), (r) => r.body.state === 'Submitted');
    await blocks(operator, 2);
    await until(() => op(w.body.operation_reference), (r) => r.body.state === 'Completed');
    expect(await balance(operator, 'did:ledger:acct:alice')).toMatchObject({ available: '1300', encumbered: '0' });
    const compared = (await operator.post('/v1/ops/settlement/comparisons', {}, undefined, key())).body.result.settlement.comparison;
    expect(compared.rows).toEqual([{ asset: 'USD', book: '300', layer: '307', difference: '7', liabilities: null, liabilities_checkpoint: null, solvent: null }]);
    // Insufficient: decided Rejected.
    const big = await alice.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '100000', asset: 'USD', destination: away }, undefined, key());
    expect((await decided(alice, big.body.operation_reference)).body.error.error).toBe('ERR-InsufficientAvailable');
  });

  it('withdraws under the same authority as a debit: owner, operator on delegated accounts, grants naming withdraw within their bounds', async () => {
    const operator = shared.as('operator');
    const bob = shared.as('bob');
    const submit = (who: Client, amount: string) => who.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount, asset: 'USD', destination: { instance: 9, account_ref: 'ef'.repeat(32) } }, undefined, key());
    // Another customer: no authority over alice's account (refused at submission, nothing stored).
    expect(await refused(submit(bob, '5'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    // The operator over a delegated account.
    const byOperator = await submit(operator, '5');
    const decidedOp = (await decided(operator, byOperator.body.operation_reference)).body;
    expect(decidedOp.state).toBe('Instructed');
    expect(decidedOp.result.settlement.instruction.destination).toEqual({ instance: 9, account_ref: 'ef'.repeat(32) });
    // A grant naming transfer only does not withdraw; one naming withdraw does, within its per-operation bound.
    const give = async (ops: string[]) =>
      (await decided(shared.as('alice'), (await shared.as('alice').post('/v1/grants', { kind: 'delegated', principal: 'did:ledger:id:bob', subject: { account: 'did:ledger:acct:alice' }, ops, per_operation: '10' }, undefined, key())).body.operation_reference)).body.result.grant;
    await give(['transfer']);
    expect(await refused(submit(bob, '5'))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    const grant = await give(['withdraw']);
    const byGrant = await submit(bob, '5');
    expect((await decided(bob, byGrant.body.operation_reference)).body.state).toBe('Instructed');
    const movements = (await operator.get('/v1/movements?account=did:ledger:acct:alice&limit=1000')).body.movements as { operation: string; authorities: { kind: string; grant: string }[]; kind: string; status: string; balance: string }[];
    const held = movements.filter((m) => m.operation === byGrant.body.operation_reference);
    expect(held.map((m) => [m.kind, m.status, m.balance])).toEqual([['withdrawal', 'held', 'available'], ['withdrawal', 'held', 'encumbered']]);
    expect(held[0]!.authorities[0]).toMatchObject({ kind: 'delegated', grant });
    expect(await refused(submit(bob, '11'))).toEqual({ status: 403, error: 'ERR-BoundExceeded' });
    // Bad input changes nothing: a malformed destination, a zero amount, an unknown asset.
    expect(await refused(bob.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '1', asset: 'USD', destination: { account: 'zz' } }))).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    expect(await refused(bob.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '0', asset: 'USD', destination: away }))).toEqual({ status: 400, error: 'ERR-ZeroAmount' });
    // A nested member is named by its path, not as if the top-level one were missing.
    const nested = await bob.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '1', asset: 'USD', destination: {} });
    expect(nested.body).toMatchObject({ error: 'ERR-MalformedCommand', description: expect.stringContaining('destination.') });
    expect(await refused(operator.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '1', asset: 'ZZZ', destination: away }))).toEqual({ status: 404, error: 'ERR-UnknownAsset' });
    expect(await refused(operator.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '1', asset: 'EUR', destination: away }))).toEqual({ status: 400, error: 'ERR-UnsupportedLeg' });
    // Let both finish before the next test: nothing on the layer pays them beyond what it holds, so they complete.
    await blocks(operator, 3);
    await until(() => op(byGrant.body.operation_reference), (r) => r.body.state === 'Completed');
    await until(() => op(byOperator.body.operation_reference), (r) => r.body.state === 'Completed');
  });

  it('withdraws out of an owned account only under its owner, and never out of a frozen account or for a restricted identity', async () => {
    const operator = shared.as('operator');
    const carol = shared.as('carol');
    const carolId = 'did:ledger:id:carol';
    // A refusal at submission or a Rejected decision: the code either way.
    const outcome = async (who: Client, reply: Promise<{ status: number; body: any }>) => {
      const r = await reply;
      if (r.status !== 202) return r.body.error as string;
      const d = (await decided(who, r.body.operation_reference)).body;
      return d.state === 'Rejected' ? (d.error.error as string) : (d.state as string);
    };
    const withdraw = (who: Client, account: string, amount = '1') => who.post('/v1/withdrawals', { account, amount, asset: 'USD', destination: away }, undefined, key());
    const acknowledged = (await carol.get(`/v1/identities/${carolId}/recovery-terms`)).body.digest;
    const opened = await carol.post('/v1/accounts', { custody: 'owned', kind: 'customer', owner: carolId, acknowledged }, undefined, key());
    const owned = (await decided(carol, opened.body.operation_reference)).body.result.account as string;
    const funded = await carol.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:carol', to: owned, amount: '20', asset: 'USD' }] }, undefined, key());
    expect((await decided(carol, funded.body.operation_reference)).body.state).toBe('Completed');

    expect(await outcome(operator, withdraw(operator, owned))).toBe('ERR-NotAuthorised');
    expect(await balance(operator, owned)).toMatchObject({ available: '20', encumbered: '0' });
    const byOwner = await withdraw(carol, owned);
    expect(await outcome(carol, Promise.resolve(byOwner))).toBe('Instructed');

    const freeze = await operator.post('/v1/accounts/did:ledger:acct:carol/freeze', { justification: 'withdrawal test' }, undefined, key());
    expect((await decided(operator, freeze.body.operation_reference)).body.state).toBe('Completed');
    expect(await outcome(carol, withdraw(carol, 'did:ledger:acct:carol'))).toBe('ERR-AccountFrozen');
    expect(await outcome(operator, withdraw(operator, 'did:ledger:acct:carol'))).toBe('ERR-AccountFrozen');
    const unfreeze = await operator.post('/v1/accounts/did:ledger:acct:carol/unfreeze', { justification: 'withdrawal test' }, undefined, key());
    expect((await decided(operator, unfreeze.body.operation_reference)).body.state).toBe('Completed');

    const restrict = await operator.post(`/v1/ops/identities/${carolId}/restrict`, { justification: 'withdrawal test' }, undefined, key());
    expect((await decided(operator, restrict.body.operation_reference)).body.state).toBe('Completed');
    expect(await outcome(carol, withdraw(carol, owned))).toBe('ERR-IdentityRestricted');
    const unrestrict = await operator.post(`/v1/ops/identities/${carolId}/unrestrict`, { justification: 'withdrawal test' }, undefined, key());
    expect((await decided(operator, unrestrict.body.operation_reference)).body.state).toBe('Completed');
    expect(await balance(operator, owned)).toMatchObject({ available: '19', encumbered: '1' });
    // Let the instruction finish before the next test (1 more left the book and the layer).
    await blocks(operator, 3);
    await until(() => op(byOwner.body.operation_reference), (r) => r.body.state === 'Completed');
  });

  it('expires an instruction the layer never carried and returns its value; the layer down refuses settlement commands', async () => {
    const operator = shared.as('operator');
    const alice = shared.as('alice');
    const w = await alice.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '100', asset: 'USD', destination: away }, undefined, key());
    expect((await decided(alice, w.body.operation_reference)).body.state).toBe('Instructed');
    expect((await operator.post('/v1/ops/layer/status', { serving: false })).body.serving).toBe(false);
    const down = await alice.post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '1', asset: 'USD', destination: away }, undefined, key());
    expect(down.status).toBe(503);
    expect(down.body.error).toBe('ERR-SettlementLayerUnavailable');
    expect(Number(down.headers['retry-after'])).toBeGreaterThan(0);
    expect((await refused(operator.post('/v1/ops/assets/USD/binding', { location })))).toEqual({ status: 503, error: 'ERR-SettlementLayerUnavailable' });
    // The rest of the book works.
    const t = await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }] }, undefined, key());
    expect((await decided(alice, t.body.operation_reference)).body.state).toBe('Completed');
    expect((await operator.get('/v1/ops/settlement/status')).body).toMatchObject({ serving: false });
    await blocks(operator, 5);
    await operator.post('/v1/ops/layer/status', { serving: true });
    await blocks(operator, 3);
    await until(() => op(w.body.operation_reference), (r) => r.body.state === 'Expired');
    expect(await balance(operator, 'did:ledger:acct:alice')).toMatchObject({ available: '1289', encumbered: '0' });
    const sync = await operator.post('/v1/ops/settlement/sync', {}, undefined, key());
    expect((await decided(operator, sync.body.operation_reference)).body.result.settlement.moved).toEqual([]);
    const compared = (await operator.post('/v1/ops/settlement/comparisons', {}, undefined, key())).body.result.settlement.comparison;
    expect(compared.rows).toEqual([{ asset: 'USD', book: '289', layer: '296', difference: '7', liabilities: null, liabilities_checkpoint: null, solvent: null }]);
    // A checkpoint's comparison is the same comparison, with its rows.
    const checkpoint = await operator.post('/v1/ops/checkpoints', {}, undefined, key());
    expect(checkpoint.body.result.anchoring.comparison).toMatchObject({ rows: compared.rows, differs: true, height: compared.height });
  });

  it('refuses a binding the layer attests otherwise: back to book_only, with the mismatch', async () => {
    const operator = shared.as('operator');
    const there = 'ef'.repeat(32);
    await operator.post('/v1/ops/layer/locations', { location: there, symbol: 'EUR', decimals: 6, status: 'active' });
    // Another asset's location: refused.
    const taken = await operator.post('/v1/ops/assets/EUR/binding', { location }, undefined, key());
    expect((await decided(operator, taken.body.operation_reference)).body.error.error).toBe('ERR-InvalidTransition');
    const bind = await operator.post('/v1/ops/assets/EUR/binding', { location: there }, undefined, key());
    expect((await decided(operator, bind.body.operation_reference)).body.state).toBe('Completed');
    for (let i = 0; i < 20 && (await asset(operator, 'EUR')).binding === 'binding'; i++) {
      await blocks(operator, 1);
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(await asset(operator, 'EUR')).toMatchObject({ binding: 'book_only', location: there });
    // The asset view keeps the spec's shape; the operator reads why in the settlement status.
    expect(Object.keys(await asset(operator, 'EUR')).sort()).toEqual(['binding', 'id', 'kind', 'location', 'precision', 'status']);
    const { attestations } = (await operator.get('/v1/ops/settlement/status')).body;
    expect(attestations).toEqual([
      { asset: 'EUR', verdict: 'book_only', mismatch: 'decimals', height: expect.any(Number), operation_reference: expect.any(String) },
      { asset: 'USD', verdict: 'bound', mismatch: null, height: expect.any(Number), operation_reference: expect.any(String) },
    ]);
    const eur = attestations[0];
    expect((await op(eur.operation_reference)).body.result.settlement.attestations).toContainEqual({ asset: 'EUR', verdict: 'book_only', mismatch: 'decimals' });
  });

  it('registers and deprecates assets', async () => {
    const operator = shared.as('operator');
    const reg = await operator.post('/v1/ops/assets', { id: 'GBP', kind: 'fiat', precision: 2 });
    expect((await decided(operator, reg.body.operation_reference)).body.state).toBe('Completed');
    expect(await asset(operator, 'GBP')).toEqual({ id: 'GBP', kind: 'fiat', precision: 2, status: 'active', binding: 'book_only', location: null });
    expect(await refused(operator.post('/v1/ops/assets', { id: 'GBP', kind: 'fiat', precision: 2 }, undefined, key()))).toEqual({ status: 409, error: 'ERR-InvalidTransition' });
    expect(await refused(shared.as('alice').post('/v1/ops/assets', { id: 'JPY', kind: 'fiat', precision: 0 }))).toEqual({ status: 403, error: 'ERR-NotAuthorised' });
    const dep = await operator.post('/v1/ops/assets/USD/deprecate', {});
    expect((await decided(operator, dep.body.operation_reference)).body.state).toBe('Completed');
    expect((await asset(operator, 'USD')).status).toBe('deprecated');
    const t = await shared.as('alice').post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }] }, undefined, key());
    expect((await decided(shared.as('alice'), t.body.operation_reference)).body.error.error).toBe('ERR-AssetDeprecated');
    expect(await refused(shared.as('alice').post('/v1/withdrawals', { account: 'did:ledger:acct:alice', amount: '1', asset: 'USD', destination: away }, undefined, key()))).toEqual({ status: 409, error: 'ERR-AssetDeprecated' });
  });
});
