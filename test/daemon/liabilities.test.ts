/**
 * Liabilities trees and a holder's proof through a real ledgerd (CONTRACT 12.2-12.4):
 * version-2 checkpoints whose per-asset totals equal the sum of every customer balance
 * at the checkpoint's view; a property test over random transfers, holds, withdrawals
 * and deposits with checkpoints between them, where each customer's proof verifies with
 * both verifiers, its leaf is its balances, and a dropped or netted leaf is caught; the
 * route's authorization and refusals in order; ledgerctl's liabilities commands offline.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liabilitiesChecks, reportOf } from '../../src/checkpoints/verify-proofs.js';
import { ledgerctl } from '../cli/support/ledgerctl.js';
import { checkChain, liabilitiesRootOf, verifyLiabilities } from '../support/independent-audit.js';
import { independentlyVerify } from '../support/independent-verifier.js';
import { type Client, type Daemon, client, decided, refused, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
const location = '5e'.repeat(32);
const customers = ['alice', 'bob', 'carol'] as const;
const acct = (name: string) => `did:ledger:acct:${name}`;
let daemon: Daemon;
let dir: string;
let op: Client;
let keys: Awaited<ReturnType<typeof writeBook>>;
let keyCount = 0;
const key = () => ({ 'client-key': `liab-${++keyCount}` });
const as = (name: string) => client(() => daemon.url, keys.customers[name]!);
const refs: Record<string, string> = {};

beforeAll(async () => {
  dir = newDir();
  keys = await writeBook(dir, { alice: 5_000n, bob: 300n, carol: 0n });
  writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 2, instance: 9, instructionExpiryBlocks: 4 } }));
  daemon = await startDaemon({ dataDir: dir });
  op = client(() => daemon.url, keys.operator);
  await decided(op, (await op.post('/v1/ops/assets/USD/binding', { location }, undefined, key())).body.operation_reference);
  for (let i = 0; i < 50 && ((await op.get('/v1/assets')).body as { id: string; binding: string }[]).find((a) => a.id === 'USD')!.binding !== 'bound'; i++) {
    await op.post('/v1/ops/layer/blocks', { count: 1 });
  }
  for (const name of customers) refs[name] = (await op.get(`/v1/accounts/${acct(name)}`)).body.deposit_ref;
});
afterAll(async () => {
  await daemon.stop();
});

async function chain(): Promise<any[]> {
  return ((await op.get('/v1/checkpoints?limit=1000')).body.items as any[]).reverse();
}

/**
 * Takes a checkpoint, reads every customer's balances at once (nothing else runs, and
 * the view must be the checkpoint's journal position), then makes it final.
 */
async function checkpointWithBalances(): Promise<{ checkpoint: any; balances: Map<string, Map<string, any>> }> {
  // Blocks are taken in by settle commands decided after them: wait until the book is still.
  const position = async () => (await op.get(`/v1/accounts/${acct('alice')}/balances`)).body.view as number;
  for (let last = -1, now = await position(); now !== last; last = now, now = await position()) await new Promise((r) => setTimeout(r, 150));
  const taken = await op.post('/v1/ops/checkpoints', {}, undefined, key());
  expect(taken.status).toBe(200);
  const checkpoint = taken.body.result.anchoring.checkpoint;
  const balances = new Map<string, Map<string, any>>();
  for (const name of customers) {
    const b = (await op.get(`/v1/accounts/${acct(name)}/balances`)).body;
    // Read at the checkpoint's own journal position.
    expect(b.view).toBe(checkpoint.entry_sequence);
    balances.set(name, new Map(b.balances.map((row: any) => [row.asset, row])));
  }
  await op.post('/v1/ops/layer/blocks', { count: 3 });
  const final = (await op.get(`/v1/checkpoints/${checkpoint.number}`)).body;
  expect(final.status).toBe('final');
  return { checkpoint: final, balances };
}

/** Every check a holder and an auditor can make at one checkpoint. */
async function auditCheckpoint(checkpoint: any, balances: Map<string, Map<string, any>>): Promise<void> {
  const held = checkChain(9, await chain()) as any[];
  expect(checkpoint.version).toBe(2);
  const leaves: any[] = [];
  let total = 0n;
  for (const name of customers) {
    const row = balances.get(name)!.get('USD');
    if (row === undefined) {
      expect(await refused(as(name).get(`/v1/accounts/${acct(name)}/liabilities?checkpoint=${checkpoint.number}&asset=USD`))).toEqual({ status: 409, error: 'ERR-NotDisclosable' });
      continue;
    }
    total += BigInt(row.available) + BigInt(row.reserved) + BigInt(row.encumbered);
    const proof = (await as(name).get(`/v1/accounts/${acct(name)}/liabilities?checkpoint=${checkpoint.number}&asset=USD`)).body;
    const leaf = verifyLiabilities(9, held[checkpoint.number - 1], acct(name), 'USD', proof);
    expect({ available: leaf.available, reserved: leaf.reserved, encumbered: leaf.encumbered }, `${name} at ${checkpoint.number}`).toEqual({ available: row.available, reserved: row.reserved, encumbered: row.encumbered });
    expect(reportOf(liabilitiesChecks(proof, { account: acct(name), asset: 'USD', instance: 9, anchored: held[checkpoint.number - 1] })).passed).toBe(true);
    leaves.push(leaf);
    // Netting: a sibling whose sum is lowered or negative, or a leaf with less, fails both verifiers.
    if (proof.path.length > 0) {
      for (const sum of ['-1', String(BigInt(proof.path[0].sum) - 1n)]) {
        const netted = structuredClone(proof);
        netted.path[0].sum = sum;
        expect(() => verifyLiabilities(9, held[checkpoint.number - 1], acct(name), 'USD', netted)).toThrow();
        expect(reportOf(liabilitiesChecks(netted, { account: acct(name), asset: 'USD', instance: 9, anchored: held[checkpoint.number - 1] })).passed).toBe(false);
      }
    }
  }
  const usd = checkpoint.liabilities.USD;
  // The totals equal the sum of every customer balance at the checkpoint's view.
  expect(usd?.total ?? '0').toBe(total.toString());
  if (leaves.length === 0) return expect(usd).toBeUndefined();
  // The leaves the holders were shown are the whole tree: rebuilt independently, the same root.
  expect(liabilitiesRootOf(leaves)).toEqual(usd);
  // A tree without one holder (a dropped leaf) has another root: that holder's proof cannot lead to it.
  if (leaves.length > 1) expect(liabilitiesRootOf(leaves.slice(1)).root).not.toBe(usd.root);
}

describe('liabilities trees', () => {
  it('are in every new checkpoint (version 2), their totals the sum of customer balances, each holder proven in', async () => {
    const { checkpoint, balances } = await checkpointWithBalances();
    expect(Object.keys(checkpoint).sort()).toEqual(['commitment', 'created_at', 'entry_sequence', 'kernel_root', 'liabilities', 'number', 'previous', 'status', 'version']);
    expect(checkpoint.previous).toBe('0'.repeat(64));
    expect(checkpoint.liabilities).toEqual({ USD: { leaves: 2, root: expect.stringMatching(/^[0-9a-f]{64}$/), total: '5300' } });
    await auditCheckpoint(checkpoint, balances);
  });

  it('hold for random transfers, holds, withdrawals and deposits with checkpoints between them', async () => {
    const name = fc.constantFrom(...customers);
    const amount = fc.integer({ min: 1, max: 400 });
    const step = fc.oneof(
      fc.record({ kind: fc.constant('transfer' as const), from: name, to: name, amount }),
      fc.record({ kind: fc.constant('hold' as const), from: name, amount }),
      fc.record({ kind: fc.constant('withdraw' as const), from: name, amount }),
      fc.record({ kind: fc.constant('deposit' as const), from: name, amount }),
      fc.record({ kind: fc.constant('blocks' as const), count: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant('checkpoint' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 10 }), async (steps) => {
        for (const s of [...steps, { kind: 'checkpoint' as const }]) {
          if (s.kind === 'transfer') {
            const r = await as(s.from).post('/v1/transfers', { legs: [{ from: acct(s.from), to: acct(s.to), asset: 'USD', amount: String(s.amount) }] }, undefined, key());
            await decided(as(s.from), r.body.operation_reference);
          } else if (s.kind === 'hold') {
            const r = await as(s.from).post('/v1/reservations', { payer: acct(s.from), amount: String(s.amount), asset: 'USD' }, undefined, key());
            await decided(as(s.from), r.body.operation_reference);
          } else if (s.kind === 'withdraw') {
            const r = await as(s.from).post('/v1/withdrawals', { account: acct(s.from), amount: String(s.amount), asset: 'USD', destination: { account: 'cd'.repeat(32) } }, undefined, key());
            await decided(as(s.from), r.body.operation_reference);
          } else if (s.kind === 'deposit') {
            expect((await op.post('/v1/ops/layer/deposits', { asset: 'USD', amount: String(s.amount), account_ref: refs[s.from] })).status).toBe(200);
          } else if (s.kind === 'blocks') {
            await op.post('/v1/ops/layer/blocks', { count: s.count });
          } else {
            const { checkpoint, balances } = await checkpointWithBalances();
            await auditCheckpoint(checkpoint, balances);
          }
        }
      }),
      { numRuns: 4, seed: 2026 },
    );
  });

  it('give every comparison row the newest anchored checkpoint\'s liabilities, and whether the layer covers them', async () => {
    const env = { LEDGER_URL: daemon.url, LEDGER_TOKEN: keys.operator, LEDGERCTL_CONFIG_DIR: dir };
    const compareAt = async (number: number) => {
      for (let i = 0; i < 20; i++) {
        await decided(op, (await op.post('/v1/ops/settlement/sync', {}, undefined, key())).body.operation_reference);
        const c = (await op.post('/v1/ops/settlement/comparisons', {}, undefined, key())).body.result.settlement.comparison;
        if (c.rows[0].liabilities_checkpoint === number) return c.rows[0];
        await op.post('/v1/ops/layer/blocks', { count: 1 });
      }
      throw new Error(`no comparison with checkpoint ${number}`);
    };
    const covered = (await checkpointWithBalances()).checkpoint;
    const before = await compareAt(covered.number);
    expect(before).toMatchObject({ asset: 'USD', liabilities: covered.liabilities.USD.total, liabilities_checkpoint: covered.number });
    expect(before.solvent).toBe(BigInt(before.layer) >= BigInt(before.liabilities));
    // A shortfall: the operator issues value from the treasury to a customer with nothing placed on the layer for it.
    const gap = BigInt(before.layer) - BigInt(before.liabilities);
    const shortfall = gap + 1000n > 0n ? gap + 1000n : 1n;
    const grant = await op.post('/v1/ops/issuance-grants', { grant: { kind: 'issuance', principal: 'did:ledger:id:operator', subject: { account: 'did:ledger:acct:treasury-USD' }, ops: ['transfer'] }, justification: 'audit test' }, undefined, key());
    expect((await decided(op, grant.body.operation_reference)).body.error).toBeUndefined();
    const issued = await op.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:treasury-USD', to: acct('carol'), asset: 'USD', amount: shortfall.toString() }] }, undefined, key());
    expect((await decided(op, issued.body.operation_reference)).body.state, JSON.stringify(issued.body)).toBe('Completed');
    const short = (await checkpointWithBalances()).checkpoint;
    const row = await compareAt(short.number);
    expect(row).toMatchObject({ liabilities: short.liabilities.USD.total, liabilities_checkpoint: short.number, solvent: false });
    expect(row.layer).toBe(before.layer);
    expect(BigInt(row.liabilities)).toBe(BigInt(before.liabilities) + shortfall);
    const table = await ledgerctl(['settlement', 'compare', '-o', 'table'], env);
    // On a terminal in major units (USD has 2 decimals).
    const liabilitiesMajor = `${BigInt(row.liabilities) / 100n}.${(BigInt(row.liabilities) % 100n).toString().padStart(2, '0')} USD`;
    expect(table.stdout).toMatch(new RegExp(`LIABILITIES\\s+CHECKPOINT\\s+SOLVENT\\nUSD\\s.*\\s${liabilitiesMajor}\\s+${short.number}\\s+NO\\n`));
    // Value placed on the layer for the treasury (not a customer's) covers it; the liabilities do not change.
    const treasuryRef = (await op.get('/v1/accounts/did:ledger:acct:treasury-USD')).body.deposit_ref;
    const missing = (BigInt(row.liabilities) - BigInt(row.layer)).toString();
    expect((await op.post('/v1/ops/layer/deposits', { asset: 'USD', amount: missing, account_ref: treasuryRef })).status).toBe(200);
    await op.post('/v1/ops/layer/blocks', { count: 3 });
    const again = (await checkpointWithBalances()).checkpoint;
    expect(again.liabilities.USD.total).toBe(short.liabilities.USD.total);
    const after = await compareAt(again.number);
    expect(after).toMatchObject({ liabilities: again.liabilities.USD.total, solvent: true });
    expect((await ledgerctl(['settlement', 'compare', '--json'], env)).json().rows[0]).toMatchObject({ solvent: true, liabilities_checkpoint: again.number });
  });

  it('serve a holder its proof alone, refusing in CONTRACT 12.4 order', async () => {
    const n = (await chain()).at(-1).number;
    const path = (account: string, query: string) => `/v1/accounts/${account}/liabilities?${query}`;
    const ok = `checkpoint=${n}&asset=USD`;
    expect((await as('alice').get(path(acct('alice'), ok))).status).toBe(200);
    expect((await op.get(path(acct('alice'), ok))).status).toBe(200);
    const identities = client(() => daemon.url, keys.identities);
    const cases: [Client, string, number, string][] = [
      [as('alice'), path('not-an-account', ok), 400, 'ERR-MalformedCommand'],
      [as('alice'), path(acct('alice'), 'checkpoint=x&asset=USD'), 400, 'ERR-MalformedCommand'],
      [as('alice'), path(acct('alice'), `checkpoint=${n}&asset=usd!`), 400, 'ERR-MalformedCommand'],
      [as('alice'), path(acct('alice'), `${ok}&x=1`), 400, 'ERR-MalformedCommand'],
      [as('alice'), path(acct('alice'), 'asset=USD'), 400, 'ERR-QueryUnbounded'],
      [as('alice'), path(acct('alice'), `checkpoint=${n}`), 400, 'ERR-QueryUnbounded'],
      [as('bob'), path(acct('bob'), 'asset=USD'), 400, 'ERR-QueryUnbounded'],
      [as('bob'), path(acct('alice'), ok), 403, 'ERR-NotAuthorised'],
      [as('bob'), path(acct('nobody'), ok), 403, 'ERR-NotAuthorised'],
      [identities, path(acct('alice'), ok), 403, 'ERR-NotAuthorised'],
      [as('bob'), path(acct('alice'), 'checkpoint=999&asset=XYZ'), 403, 'ERR-NotAuthorised'],
      [op, path(acct('nobody'), ok), 404, 'ERR-UnknownAccount'],
      [as('alice'), path(acct('alice'), `checkpoint=${n}&asset=XYZ`), 404, 'ERR-UnknownAsset'],
      [as('alice'), path(acct('alice'), 'checkpoint=999&asset=USD'), 409, 'ERR-AnchorNotFinal'],
      [as('alice'), path(acct('alice'), 'checkpoint=0&asset=USD'), 409, 'ERR-AnchorNotFinal'],
      [op, path('did:ledger:acct:treasury-USD', ok), 409, 'ERR-NotDisclosable'],
    ];
    for (const [caller, p, status, error] of cases) expect(await refused(caller.get(p)), p).toEqual({ status, error });
    // Not final yet.
    const pending = (await op.post('/v1/ops/checkpoints', {}, undefined, key())).body.result.anchoring.checkpoint.number;
    expect(await refused(as('alice').get(path(acct('alice'), `checkpoint=${pending}&asset=USD`)))).toEqual({ status: 409, error: 'ERR-AnchorNotFinal' });
    await op.post('/v1/ops/layer/blocks', { count: 3 });
  });

  it('back a v2 disclosure of holds_at_least, verified by GET and POST, offline and independently', async () => {
    const n = (await chain()).at(-1).number;
    const alice = as('alice');
    const body = (extra: object) => ({ subject: acct('alice'), assertion: { shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'available' }, recipient_reference: 'ab'.repeat(32), checkpoint: n, ...extra });
    const made = await alice.post('/v1/disclosures', body({ with_liabilities: true }), undefined, key());
    expect(made.status, made.text).toBe(200);
    const hex = made.body.result.disclosure;
    const d = JSON.parse(Buffer.from(hex, 'hex').toString('utf8'));
    expect(d.v).toBe(2);
    expect(d.liabilities).toMatchObject({ account: acct('alice'), asset: 'USD', checkpoint: { number: n } });
    const report = 'parse: ok\nsignature: ok\ncheckpoint: ok\nproofs: ok\nliabilities: ok\nassertion: ok (exact: the balance at the checkpoint is the one counted in the published liabilities)';
    expect((await alice.post('/v1/disclosures/verify', { disclosure: hex })).body).toEqual({ passed: true, report });
    expect((await alice.get(`/v1/disclosures/verify?disclosure=${hex}`)).body).toEqual({ passed: true, report });
    const clerk = (await alice.get('/v1/clerk')).body;
    independentlyVerify(hex, { clerk: clerk.public_key, instance: clerk.instance, checkpoints: await chain() });
    // v1 unchanged without the flag; refusals.
    expect(JSON.parse(Buffer.from((await alice.post('/v1/disclosures', body({}), undefined, key())).body.result.disclosure, 'hex').toString('utf8')).v).toBe(1);
    const occurred = { subject: acct('alice'), assertion: { shape: 'operation_occurred', operation: 'x' }, recipient_reference: 'ab'.repeat(32), with_liabilities: true };
    expect(await refused(alice.post('/v1/disclosures', occurred, undefined, key()))).toEqual({ status: 400, error: 'ERR-DisclosureUnsupported' });
    // POST verify: exactly {disclosure: string}, at most 4 MiB, a query (no client key, nothing stored).
    for (const bad of [{ disclosure: 5 }, { disclosure: hex, x: 1 }, {}, [hex]]) expect(await refused(alice.post('/v1/disclosures/verify', bad)), JSON.stringify(bad).slice(0, 40)).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
    // Over 4 MiB: refused on its Content-Length alone (the head sent, no body: writing it all would race the server's close).
    const head = await new Promise<string>((resolve, reject) => {
      const url = new URL(daemon.url);
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(`POST /v1/disclosures/verify HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${keys.customers.alice}\r\ncontent-type: application/json\r\ncontent-length: ${4 * 1024 * 1024 + 1}\r\n\r\n{"disclosure":"`);
      });
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
        if (text.includes('\r\n\r\n') && text.includes('}')) socket.destroy(), resolve(text);
      });
      socket.on('error', reject);
    });
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toContain('"error":"ERR-MalformedCommand"');
    const large = await alice.post('/v1/disclosures/verify', { disclosure: 'ab'.repeat(1024 * 1024) });
    expect(large.status).toBe(200);
    expect(large.body.passed).toBe(false);
    // A changed byte fails the service's verifier and the independent one.
    const held = await chain();
    const changed = hex.slice(0, 100) + (hex[100] === '0' ? '1' : '0') + hex.slice(101);
    expect((await alice.post('/v1/disclosures/verify', { disclosure: changed })).body.passed).toBe(false);
    expect(() => independentlyVerify(changed, { clerk: clerk.public_key, instance: clerk.instance, checkpoints: held })).toThrow();
    // ledgerctl verifies it with the POST form, and offline.
    const file = join(dir, 'cps-d.json');
    const env = { LEDGER_URL: daemon.url, LEDGER_TOKEN: keys.customers.alice!, LEDGERCTL_CONFIG_DIR: dir };
    writeFileSync(join(dir, 'd2.hex'), hex);
    expect((await ledgerctl(['disclosures', 'verify', `@${join(dir, 'd2.hex')}`], env)).json()).toEqual({ passed: true, report });
    expect((await ledgerctl(['checkpoints', 'export', '--out', file], env)).code).toBe(0);
    writeFileSync(join(dir, 'clerk.hex'), clerk.public_key);
    const offline = await ledgerctl(['disclosures', 'verify', `@${join(dir, 'd2.hex')}`, '--offline', '--clerk-key', `@${join(dir, 'clerk.hex')}`, '--checkpoints', file], {});
    expect(offline.json()).toEqual({ passed: true, report });
  });

  it('are fetched and verified by ledgerctl, offline with --proof; a changed byte fails', async () => {
    const n = (await chain()).at(-1).number;
    const env = { LEDGER_URL: daemon.url, LEDGER_TOKEN: keys.customers.alice!, LEDGERCTL_CONFIG_DIR: dir };
    const file = join(dir, 'cps.json');
    const proofFile = join(dir, 'alice.json');
    expect((await ledgerctl(['checkpoints', 'export', '--out', file], env)).code).toBe(0);
    const got = await ledgerctl(['accounts', 'liabilities', acct('alice'), '--checkpoint', String(n), '--asset', 'USD', '--out', proofFile], env);
    expect(got.code, got.stderr).toBe(0);
    const offline = ['accounts', 'verify-liabilities', acct('alice'), '--checkpoint', String(n), '--asset', 'USD', '--checkpoints', file];
    const passed = await ledgerctl([...offline, '--proof', proofFile, '-o', 'table'], {});
    expect(passed.code, passed.stderr).toBe(0);
    expect(passed.stdout).toBe('file: ok\ncheckpoint: ok\nleaf: ok\npath: ok\npassed\n');
    expect((await ledgerctl(offline, env)).json()).toEqual({ passed: true, report: 'file: ok\ncheckpoint: ok\nleaf: ok\npath: ok' });
    const proof = JSON.parse(readFileSync(proofFile, 'utf8'));
    const held = JSON.parse(readFileSync(file, 'utf8')).checkpoints[n - 1];
    const variants: [string, (p: any) => void][] = [
      ['salt', (p) => (p.leaf.salt = (p.leaf.salt[0] === '0' ? '1' : '0') + p.leaf.salt.slice(1))],
      ['available', (p) => (p.leaf.available = String(BigInt(p.leaf.available) + 1n))],
      ['total', (p) => (p.checkpoint.liabilities.USD.total = String(BigInt(p.checkpoint.liabilities.USD.total) + 1n))],
      ['index', (p) => (p.index = p.index === 0 ? 1 : 0)],
      ['account', (p) => (p.leaf.account = acct('bob'))],
    ];
    if (proof.path.length > 0) variants.push(['path hash', (p) => (p.path[0].hash = (p.path[0].hash[0] === '0' ? '1' : '0') + p.path[0].hash.slice(1))]);
    for (const [what, change] of variants) {
      const changed = structuredClone(proof);
      change(changed);
      writeFileSync(join(dir, 'changed.json'), JSON.stringify(changed));
      const failed = await ledgerctl([...offline, '--proof', join(dir, 'changed.json')], {});
      expect(failed.code, what).toBe(1);
      expect(failed.json().passed, what).toBe(false);
      expect(() => verifyLiabilities(9, held, acct('alice'), 'USD', changed), what).toThrow();
    }
    expect((await ledgerctl([...offline.slice(0, 8), join(dir, 'none.json'), '--proof', proofFile], {})).code).toBe(2);
    expect((await ledgerctl(['accounts', 'liabilities', acct('bob'), '--checkpoint', String(n), '--asset', 'USD'], env)).code).toBe(1);
  });
});
