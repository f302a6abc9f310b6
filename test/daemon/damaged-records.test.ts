/**
 * Damaged stored records through the daemon: a record that is not JSON or whose fields
 * lack their shape (a token grant, a grant, a checkpoint, a direct command's stored
 * reply, the settlement meta, a journal entry a disclosure rests on, an operation's state) is answered ERR-Internal with a description that names no record, logged at
 * error level naming it, and the daemon stays up and goes on deciding. `ledgerd check`
 * names a damaged checkpoint, balance and operation alike and exits 6; `ledgerd restore`
 * of a backup whose id epoch is damaged names the record and what to do.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtInPrincipals } from '../../src/auth/authority.js';
import { decodeOperationPointer, encodeEventChunk, eventChunkTexts } from '../../src/model/event-chunk.js';
import { keys } from '../../src/model/keys.js';
import { LevelStore } from '../../src/store/level.js';
import { backupLines } from '../../daemon/backup-format.js';
import { deriveDaemonKeys } from '../../daemon/book.js';
import { testClerk } from '../support/clerk.js';
import { type Client, type Daemon, client, decided, ledgerdRun, refusalOf, startDaemon, until, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const acct = (name: string) => `did:ledger:acct:${name}`;
const usd = (from: string, to: string, amount: string) => ({ legs: [{ from: acct(from), to: acct(to), asset: 'USD', amount }] });
const settlement = { settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 2, instance: 7 } };
const damagedDescription = 'a record of the book this request reads is damaged; the operator is told (ledgerd check names it)';

/** The last key under `prefix` in the stopped book of `dir`. */
async function lastKey(dir: string, prefix: string): Promise<string> {
  const store = await LevelStore.open(join(dir, 'book'), { createIfMissing: false });
  try {
    for await (const [key] of store.entries({ gte: prefix, lt: `${prefix}\uffff`, reverse: true, limit: 1 })) return key;
  } finally {
    await store.close();
  }
  throw new Error(`nothing under ${prefix}`);
}

async function plant(dir: string, writes: Record<string, (stored: string) => string>): Promise<void> {
  const store = await LevelStore.open(join(dir, 'book'), { createIfMissing: false });
  try {
    const ops = [];
    for (const [key, damage] of Object.entries(writes)) {
      ops.push({ type: 'put' as const, key, value: damage((await store.get(key)) ?? '') });
    }
    await store.write(ops, true);
  } finally {
    await store.close();
  }
}

/** The event chunk holding decided operation `ref`'s state in the stopped book of `dir`, and a damage of that chunk changing that state's text alone. */
async function operationChunk(dir: string, ref: string, damage: (text: string) => string): Promise<[string, (stored: string) => string]> {
  const store = await LevelStore.open(join(dir, 'book'), { createIfMissing: false });
  try {
    const pointer = decodeOperationPointer((await store.get(keys.operation(ref)))!)!;
    return [keys.eventChunk(pointer.chunk), (chunk) => encodeEventChunk(eventChunkTexts(chunk).map((text, i) => (i === pointer.index ? damage(text) : text)))];
  } finally {
    await store.close();
  }
}
/** A 1-leg transfer's state (layout 7's compact form) with the leg's amount `amount` as a JSON number, not decimal text. */
const amountAsNumber = (amount: string) => (text: string) => {
  const damaged = text.replace(`"USD","${amount}"]`, `"USD",${amount}]`);
  expect(damaged).not.toBe(text);
  return damaged;
};

const truncated = (text: string) => text.slice(0, text.length - 3);
const withField = (name: string, value: unknown) => (text: string) => JSON.stringify({ ...JSON.parse(text), [name]: value });

async function completed(api: Client, body: unknown, clientKey: string): Promise<any> {
  const r = await api.post('/v1/transfers', body, undefined, { 'client-key': clientKey });
  expect(r.status, r.text).toBe(202);
  return (await decided(api, r.body.operation_reference)).body;
}

/** The error-level lines the daemon logged. */
const errorLines = (daemon: Daemon) => daemon.stderr.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, any>).filter((l) => l.level >= 50);

describe('damaged records', () => {
  it('are answered ERR-Internal and logged by name, and the daemon stays up', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 1_000n, bob: 0n, carol: 10n });
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify(settlement));
    let daemon = await startDaemon({ dataDir: dir });
    const as = (name: string) => client(() => daemon.url, keys.customers[name]!);
    const op = client(() => daemon.url, keys.operator);
    try {
      const issued = await as('alice').post('/v1/grants', { kind: 'delegated', principal: 'did:ledger:id:bob', subject: { account: acct('alice') }, ops: ['transfer'], per_operation: '100' }, undefined, { 'client-key': 'g-1' });
      const grant = (await decided(as('alice'), issued.body.operation_reference)).body.result.grant as string;
      expect((await completed(as('bob'), usd('alice', 'bob', '5'), 'under-grant-1')).state).toBe('Completed');
      expect((await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-1' })).status).toBe(200);
      const between = (await completed(as('alice'), usd('alice', 'bob', '1'), 'between')).operation_reference as string;
      expect((await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-2' })).status).toBe(200);
      await completed(as('alice'), usd('alice', 'bob', '1'), 'after');
      expect((await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-3' })).status).toBe(200);
      expect((await op.post('/v1/ops/layer/blocks', { count: 3 })).status).toBe(200);
      expect(await daemon.stop()).toBe(0);

      // carol's latest journal entry as her account's index carries it: her genesis opening, a compact list whose second member is the amount, as decimal text.
      const carolsEntry = await lastKey(dir, `aa/${acct('carol')}/USD/`);
      const leafWithAmount = (text: string) => JSON.stringify(Object.assign(JSON.parse(text) as unknown[], { 1: '1.0' }));
      const [betweenChunk, betweenDamage] = await operationChunk(dir, between, amountAsNumber('1'));
      await plant(dir, {
        [betweenChunk]: betweenDamage,
        [carolsEntry]: leafWithAmount,
        [`tok/${sha256Hex(keys.customers.carol!)}`]: truncated,
        [`grant/${grant}`]: withField('terms', 'x'),
        'cp/0000000000000002': withField('kernelRoot', 7),
        [`dck/${builtInPrincipals.operator}/${sha256Hex('cp-1')}`]: truncated,
        'sl/meta': () => '{"height":"3","cut":0}',
      });
      daemon = await startDaemon({ dataDir: dir });

      const carols = await as('carol').get(`/v1/accounts/${acct('carol')}`);
      expect(refusalOf(carols)).toEqual({ status: 500, error: 'ERR-Internal' });
      expect(carols.body.description).toBe(damagedDescription);
      const underGrant = await as('bob').post('/v1/transfers', usd('alice', 'bob', '5'), undefined, { 'client-key': 'under-grant-2' });
      const underGrantState = underGrant.status === 202 ? (await decided(as('bob'), underGrant.body.operation_reference)).body.error : refusalOf(underGrant);
      expect(underGrantState.error).toBe('ERR-Internal');
      const operation = await as('alice').get(`/v1/operations/${between}`);
      expect(refusalOf(operation)).toEqual({ status: 500, error: 'ERR-Internal' });
      expect(operation.body.description).toBe(damagedDescription);
      const checkpoint = await as('alice').get('/v1/checkpoints/2');
      expect(refusalOf(checkpoint)).toEqual({ status: 500, error: 'ERR-Internal' });
      expect(checkpoint.body.description).toBe(damagedDescription);
      const repeated = await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-1' });
      expect(refusalOf(repeated)).toEqual({ status: 500, error: 'ERR-Internal' });
      expect(refusalOf(await op.get('/v1/ops/settlement/status'))).toEqual({ status: 500, error: 'ERR-Internal' });
      const disclosure = { subject: acct('carol'), assertion: { shape: 'holds_at_least', asset: 'USD', amount: '1', kind: 'available' }, legal_obligation: 'court order 1', recipient_reference: 'ab'.repeat(32) };
      expect(refusalOf(await op.post('/v1/disclosures', disclosure, undefined, { 'client-key': 'd-1' }))).toEqual({ status: 500, error: 'ERR-Internal' });
      // The layer goes on making blocks; taking them in meets the damaged meta: a warning, tried again with the next block.
      expect((await op.post('/v1/ops/layer/blocks', { count: 1 })).status).toBe(200);
      await until(
        async () => daemon.stderr.filter((line) => line.includes('taking in the settlement layer failed') && line.includes('damaged settlement meta record')).length,
        (n) => n > 0,
      );

      // Each is logged at error level, naming the record (the token grant without its key: the token's hash).
      const logged = JSON.stringify(errorLines(daemon));
      expect(logged).toContain('damaged token grant record: is not JSON');
      expect(logged).not.toContain(sha256Hex(keys.customers.carol!));
      expect(logged).toContain(`damaged grant ${grant} record: terms is not an object`);
      expect(logged).toContain('damaged checkpoint 2 (cp/0000000000000002) record: kernelRoot is not a SHA-256 digest in hex');
      expect(logged).toContain(`damaged direct command reply dck/${builtInPrincipals.operator}/${sha256Hex('cp-1')} record: is not JSON`);
      expect(logged).toContain('damaged settlement meta record: height is not an integer');
      expect(logged).toContain(`damaged account index entry ${carolsEntry} record: amount is not decimal text`);
      expect(logged).toContain('damaged operation record: amountMinor is not decimal text');

      // The daemon is up and goes on deciding; the records left whole still read.
      expect(daemon.process.exitCode).toBeNull();
      expect((await as('alice').get('/v1/health')).status).toBe(200);
      expect((await completed(as('alice'), usd('alice', 'bob', '2'), 'later')).state).toBe('Completed');
      expect((await as('alice').get('/v1/checkpoints/3')).body.status).toBe('final');
    } finally {
      await daemon.stop();
    }
  });

  it('are each named by ledgerd check, which goes on with its other passes and exits 6', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 1_000n, bob: 0n });
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify(settlement));
    const daemon = await startDaemon({ dataDir: dir });
    const op = client(() => daemon.url, keys.operator);
    const alice = client(() => daemon.url, keys.customers.alice!);
    const refs: string[] = [];
    try {
      for (const n of [1, 2, 3]) {
        refs.push((await completed(alice, usd('alice', 'bob', String(n)), `t-${n}`)).operation_reference);
        expect((await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': `cp-${n}` })).status).toBe(200);
      }
      expect((await op.post('/v1/ops/layer/blocks', { count: 3 })).status).toBe(200);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
    const [chunk, damage] = await operationChunk(dir, refs[1]!, amountAsNumber('2'));
    await plant(dir, { 'cp/0000000000000002': truncated, [`bal/${acct('bob')}/USD`]: withField('a', 6), [chunk]: damage });
    const checked = await ledgerdRun(['check', '--data-dir', dir]);
    expect(checked.code).toBe(6);
    expect(checked.stdout).toContain('damaged checkpoint 2 (cp/0000000000000002) record: is not JSON');
    expect(checked.stdout).toContain(`${acct('bob')}: damaged balance record: a is not decimal text`);
    expect(checked.stdout).toContain('damaged operation record: amountMinor is not decimal text');
    // The checkpoints on either side of the damaged one were checked: their roots and commitments hold.
    expect(checked.stdout).not.toContain('checkpoint 1:');
    expect(checked.stdout).not.toContain('checkpoint 3');
    expect(checked.stdout).toMatch(/, 3 checkpoints: \d+ problems\n$/);
  });

  it('in a backup\'s id epoch makes ledgerd restore name the record and what to do, and leaves no book', async () => {
    const source = newDir();
    await writeBook(source, { alice: 10n });
    const store = await LevelStore.open(join(source, 'book'), { createIfMissing: false });
    const file = join(source, 'backup');
    const backupKey = testClerk();
    try {
      await store.write([{ type: 'put', key: 'meta/ids-epoch', value: 'seven' }], true);
      const snap = store.snapshot();
      let text = '';
      try {
        const daemonKey = randomBytes(32).toString('base64url');
        const book = Buffer.from(deriveDaemonKeys(daemonKey)!.book).toString('hex');
        for await (const line of backupLines(snap, book, { 'daemon.key': daemonKey }, Date.now(), backupKey)) text += line;
      } finally {
        await snap.close();
      }
      writeFileSync(file, text);
    } finally {
      await store.close();
    }
    const target = newDir();
    const restored = await ledgerdRun(['restore', '--from', file, '--data-dir', target, '--verify-key', backupKey.publicKeyHex]);
    expect(restored.code).toBe(3);
    expect(restored.stderr).toBe(
      `ledgerd: backup file ${file}: its meta/ids-epoch record is damaged (damaged ids epoch record: meta/ids-epoch is not an integer 0..281474976710655), so the book it was taken from is damaged; run \`ledgerd check\` on that book, and restore from an earlier backup of it\n`,
    );
    expect(existsSync(join(target, 'book'))).toBe(false);
  });
});
