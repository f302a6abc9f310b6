/**
 * What a restore vouches for (issues 21 and 23), black-box through ledgerd and ledgerctl:
 * backups signed by the book's backup key and refused when forged (a token record added
 * and the checksum recomputed, or re-signed by another key), records outside the layout
 * refused, the carried daemon.key tied to the book, endless lines bounded, and backups
 * encrypted to an age recipient (checked against Debian's `age`, the reference
 * implementation). `ledgerd check` names what a book restored without verification holds.
 */
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { hashToken } from '../../src/auth/credentials.js';
import { LevelStore } from '../../src/store/level.js';
import { deriveDaemonKeys } from '../../daemon/book.js';
import { configDir, ledgerctl } from '../cli/support/ledgerctl.js';
import { addConfig, client, ledgerdRun, refusalOf, startDaemon, until, useDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
/** Each test runs several ledgerd processes (restores, checks, daemons): on a loaded machine one takes tens of seconds. */
const slowTestMs = 180_000;
const shared = useDaemon({ alice: 1_000n, bob: 0n }, { backup: { allowPlaintext: true } });
const verifyKey = () => readFileSync(join(shared.dir, 'backup.pub'), 'utf8').trim();
const ctl = (args: string[], url = shared.daemon.url, token = shared.keys.operator) => ledgerctl([...args, '--json'], { LEDGER_URL: url, LEDGER_TOKEN: token, LEDGERCTL_CONFIG_DIR: configDir() });

interface Parts {
  header: any;
  entries: [string, string][];
  trailer: any;
}

const parse = (text: string): Parts => {
  const lines = text.trimEnd().split('\n');
  return { header: JSON.parse(lines[0]!), entries: lines.slice(1, -1).map((l) => JSON.parse(l) as [string, string]), trailer: JSON.parse(lines[lines.length - 1]!) };
};

/** The file as a forger writes it: entries in key order, the trailer's count and checksum recomputed, the signature kept, or made by `signer`. */
function forge(parts: Parts, signer?: { privateKey: import('node:crypto').KeyObject; publicHex: string }): string {
  const header = signer === undefined ? parts.header : { ...parts.header, signedBy: signer.publicHex };
  const entries = [...parts.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const body = `${JSON.stringify(header)}\n${entries.map((e) => `${JSON.stringify(e)}\n`).join('')}`;
  const sha256 = createHash('sha256').update(body).digest('hex');
  const signature = signer === undefined ? parts.trailer.signature : sign(null, Buffer.from(`ledgerd-backup v2 ${entries.length} ${sha256}`), signer.privateKey).toString('hex');
  return `${body}${JSON.stringify({ end: true, entries: entries.length, sha256, signature })}\n`;
}

async function plainBackup(): Promise<string> {
  const dir = newDir();
  const file = join(dir, 'book.backup');
  // An operation, so the backup holds references enciphered under the book's daemon.key.
  const moved = await shared.as('alice').post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '1' }] }, undefined, { 'client-key': `t-${randomBytes(4).toString('hex')}` });
  expect(moved.status).toBeLessThan(300);
  const taken = await ctl(['ops', 'backup', '--out', file]);
  expect(taken.code, taken.stderr).toBe(0);
  return file;
}

/** `restore` of `text` (written to a file) into a new data dir. */
async function restoreText(text: string, flags: string[]) {
  const dir = newDir();
  const file = join(dir, 'forged.backup');
  writeFileSync(file, text);
  const target = join(dir, 'restored');
  return { target, run: await ledgerdRun(['restore', '--from', file, '--data-dir', target, ...flags]) };
}

const noBookIn = (target: string) => !existsSync(join(target, 'book')) && !existsSync(join(target, 'book.restore'));

describe('authenticated backups', () => {
  it('refuses a backup with an added token and a recomputed checksum, or re-signed by another key; check names the token once restored unverified', async () => {
    const parts = parse(readFileSync(await plainBackup(), 'utf8'));
    expect(parts.header).toMatchObject({ version: 2, signedBy: verifyKey() });
    const attackerToken = `ledger_${randomBytes(32).toString('base64url')}`;
    const hash = hashToken(attackerToken);
    const grant = { credential: 'did:ledger:cred:operator', principal: 'did:ledger:id:operator', scheme: 'api-key', expiresAtMs: null, scope: null, hash };
    const ghost = { id: 'did:ledger:cred:ghost', identity: 'did:ledger:id:ghost', scheme: 'api-key', verifier: null, scope: null, createdAtMs: 1, webauthnId: null, counter: 0 };
    const ghostToken = hashToken(`ledger_${randomBytes(32).toString('base64url')}`);
    const added: Parts = {
      ...parts,
      entries: [
        ...parts.entries,
        [`tok/${hash}`, JSON.stringify(grant)],
        ['cred/did:ledger:cred:ghost', JSON.stringify(ghost)],
        [`tok/${ghostToken}`, JSON.stringify({ credential: ghost.id, principal: ghost.identity, scheme: 'api-key', expiresAtMs: null, scope: null, hash: ghostToken })],
      ],
    };

    const forged = await restoreText(forge(added), ['--verify-key', verifyKey()]);
    expect(forged.run.code, forged.run.stderr).toBe(3);
    expect(forged.run.stderr).toContain('signature does not verify');
    expect(noBookIn(forged.target)).toBe(true);
    // Re-signed by the forger's own key (named in the header): the key the operator kept decides.
    const pair = generateKeyPairSync('ed25519');
    const der = pair.publicKey.export({ type: 'spki', format: 'der' });
    const resigned = await restoreText(forge(added, { privateKey: pair.privateKey, publicHex: der.subarray(der.length - 32).toString('hex') }), ['--verify-key', verifyKey()]);
    expect(resigned.run.code).toBe(3);
    expect(resigned.run.stderr).toContain('signature does not verify');
    expect(noBookIn(resigned.target)).toBe(true);
    // Without a key, restore asks for one (or the explicit flag).
    const unkeyed = await restoreText(forge(added), []);
    expect(unkeyed.run.code).toBe(2);
    expect(unkeyed.run.stderr).toContain('--verify-key');

    // Restored on purpose without verification: loud, and check names both tokens and the credential of no principal.
    const unverified = await restoreText(forge(added), ['--accept-unverified']);
    expect(unverified.run.code, unverified.run.stderr).toBe(0);
    expect(unverified.run.stderr).toContain('WITHOUT verifying');
    expect(unverified.run.stdout).toContain('NOT VERIFIED');
    const checked = await ledgerdRun(['check', '--data-dir', unverified.target]);
    expect(checked.code, checked.stdout).toBe(6);
    expect(checked.stdout).toContain('an API key of credential "did:ledger:cred:operator" is a second one');
    expect(checked.stdout).toContain('credential "did:ledger:cred:ghost" belongs to "did:ledger:id:ghost", no principal of the book');
    expect(checked.stdout).not.toContain(hash);
  }, slowTestMs);

  it('restores a signed backup with the kept key, and the restored book draws a backup key of its own', async () => {
    const file = await plainBackup();
    const text = readFileSync(file, 'utf8');
    // The backup key's secret half is in no backup.
    const secretBody = readFileSync(join(shared.dir, 'backup.key'), 'utf8').split('\n')[1]!;
    expect(secretBody.length).toBeGreaterThan(20);
    expect(text).not.toContain(secretBody);
    const target = join(newDir(), 'restored');
    // The key as a file (a kept copy of backup.pub) or as its hex.
    const restored = await ledgerdRun(['restore', '--from', file, '--data-dir', target, '--verify-key', join(shared.dir, 'backup.pub')]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain('signature verified');
    const drawn = readFileSync(join(target, 'backup.pub'), 'utf8').trim();
    expect(drawn).toMatch(/^[0-9a-f]{64}$/);
    expect(drawn).not.toBe(verifyKey());
    expect(restored.stdout).toContain(`backup verify key: ${drawn}`);
    expect((await ledgerdRun(['check', '--data-dir', target])).code).toBe(0);
    // `init` prints the public half it keeps in backup.pub.
    const fresh = join(newDir(), 'fresh');
    const init = await ledgerdRun(['init', '--data-dir', fresh]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`backup verify key: ${readFileSync(join(fresh, 'backup.pub'), 'utf8').trim()}`);
  }, slowTestMs);

  it('refuses records no part of the layout owns, naming the key, and check lists those planted in a book', async () => {
    const parts = parse(readFileSync(await plainBackup(), 'utf8'));
    for (const key of ['meta/zz', 'zzz/planted\u001b[2J']) {
      const r = await restoreText(forge({ ...parts, entries: [...parts.entries, [key, '{}']] }), ['--accept-unverified']);
      expect(r.run.code).toBe(3);
      expect(r.run.stderr).toContain(`key ${JSON.stringify(key)}, is in no space of the book's layout`);
      expect(noBookIn(r.target)).toBe(true);
    }
    const good = await restoreText(forge(parts), ['--accept-unverified']);
    expect(good.run.code, good.run.stderr).toBe(0);
    const store = await LevelStore.open(join(good.target, 'book'), { createIfMissing: false });
    try {
      await store.write([{ type: 'put', key: 'meta/zz', value: '1' }, { type: 'put', key: 'zzz/a', value: '1' }, { type: 'put', key: 'acct', value: '1' }], true);
    } finally {
      await store.close();
    }
    const checked = await ledgerdRun(['check', '--data-dir', good.target]);
    expect(checked.code).toBe(6);
    for (const key of ['meta/zz', 'zzz/a', 'acct']) expect(checked.stdout).toContain(`record "${key}" is in no space of the book's layout`);
  }, slowTestMs);

  it('ties the carried daemon.key to the book: a swapped key is refused (exit 3), and check names one swapped in a data dir', async () => {
    const parts = parse(readFileSync(await plainBackup(), 'utf8'));
    const other = `${randomBytes(32).toString('base64url')}\n`;
    const swapped = { ...parts, header: { ...parts.header, files: { ...parts.header.files, 'daemon.key': other } } };
    const r = await restoreText(forge(swapped), ['--accept-unverified']);
    expect(r.run.code).toBe(3);
    expect(r.run.stderr).toContain('daemon.key is not the key of the book it names');
    expect(noBookIn(r.target)).toBe(true);
    // The header's book recomputed for the swapped key too: the operation references were not drawn under it.
    const book = Buffer.from(deriveDaemonKeys(other)!.book).toString('hex');
    const consistent = await restoreText(forge({ ...swapped, header: { ...swapped.header, book } }), ['--accept-unverified']);
    expect(consistent.run.code).toBe(3);
    expect(consistent.run.stderr).toContain('was not drawn under the daemon.key the backup carries');
    expect(noBookIn(consistent.target)).toBe(true);

    const good = await restoreText(forge(parts), ['--accept-unverified']);
    expect(good.run.code, good.run.stderr).toBe(0);
    expect((await ledgerdRun(['check', '--data-dir', good.target])).code).toBe(0);
    writeFileSync(join(good.target, 'daemon.key'), other, { mode: 0o600 });
    const checked = await ledgerdRun(['check', '--data-dir', good.target]);
    expect(checked.code).toBe(6);
    expect(checked.stdout).toMatch(/daemon\.key: \d+ of the book's first \d+ operation references were not drawn under it/);
  }, slowTestMs);

  it('refuses a line past the bound (one endless line) with exit 3, leaving nothing half-made', async () => {
    const dir = newDir();
    const file = join(dir, 'endless.backup');
    const header = readFileSync(await plainBackup(), 'utf8').split('\n')[0]!;
    const fd = openSync(file, 'w');
    try {
      writeSync(fd, `${header}\n["acct/x","`);
      const block = Buffer.alloc(1024 * 1024, 'a');
      for (let i = 0; i < 65; i++) writeSync(fd, block);
    } finally {
      closeSync(fd);
    }
    const target = join(dir, 'restored');
    const r = await ledgerdRun(['restore', '--from', file, '--data-dir', target, '--verify-key', verifyKey()]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`a line is longer than ${64 * 1024 * 1024} bytes`);
    expect(noBookIn(target)).toBe(true);
  }, slowTestMs);
});

describe('backups encrypted to an age recipient', () => {
  it('refuses a plain backup unless the config allows it, encrypts to the recipient, and restores with the identity (interoperable with age)', async () => {
    const dir = newDir();
    const source = join(dir, 'source');
    const keys = await writeBook(source, { alice: 500n, bob: 0n });
    const daemon = await startDaemon({ dataDir: source });
    const identity = join(dir, 'identity.txt');
    execFileSync('age-keygen', ['-o', identity], { stdio: 'ignore' });
    const recipient = execFileSync('age-keygen', ['-y', identity], { encoding: 'utf8' }).trim();
    const file = join(dir, 'book.age');
    try {
      const op = client(daemon.url, keys.operator);
      const plain = await op.get('/v1/ops/backup');
      expect(refusalOf(plain)).toEqual({ status: 400, error: 'ERR-MalformedCommand' });
      expect(JSON.stringify(plain.body)).toContain('allowPlaintext');
      expect(refusalOf(await op.get('/v1/ops/backup?recipient=age1nothing')).error).toBe('ERR-MalformedCommand');
      const refusedRun = await ctl(['ops', 'backup', '--out', join(dir, 'plain')], daemon.url, keys.operator);
      expect(refusedRun.code).toBe(1);
      expect(existsSync(join(dir, 'plain'))).toBe(false);
      // Clients gone at once from an encrypted backup free the one slot (the age stream torn down with the snapshot's reader).
      for (let i = 0; i < 3; i++) {
        const gone = await request(`${daemon.url}/v1/ops/backup?recipient=${recipient}`, { headers: { authorization: `Bearer ${keys.operator}` } });
        gone.body.on('error', () => {});
        gone.body.destroy();
      }
      await until(async () => (await op.get(`/v1/ops/backup?recipient=${recipient}`)).status, (status) => status === 200);
      await client(daemon.url, keys.customers.alice!).post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount: '7' }] }, undefined, { 'client-key': 'before-backup' });
      const taken = await ctl(['ops', 'backup', '--out', file, '--recipient', recipient], daemon.url, keys.operator);
      expect(taken.code, taken.stderr).toBe(0);
      expect(taken.json()).toMatchObject({ file, recipient, bytes: expect.any(Number) });
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
    const bytes = readFileSync(file);
    expect(bytes.subarray(0, 22).toString()).toBe('age-encryption.org/v1\n');
    // None of the book's secrets (nor any of its records) in clear.
    const secrets = [
      readFileSync(join(source, 'daemon.key'), 'utf8').trim(),
      ...readFileSync(join(source, 'clerk.key'), 'utf8').split('\n').filter((l) => l.length > 20 && !l.startsWith('-----')),
      '"format":"ledgerd-backup"',
      'did:ledger:acct:alice',
    ];
    for (const secret of secrets) expect(bytes.includes(Buffer.from(secret)), secret).toBe(false);

    // The reference implementation decrypts it to the signed backup.
    const decrypted = execFileSync('age', ['-d', '-i', identity, file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(JSON.parse(decrypted.split('\n')[0]!)).toMatchObject({ format: 'ledgerd-backup', version: 2, files: { 'daemon.key': readFileSync(join(source, 'daemon.key'), 'utf8') } });
    const key = readFileSync(join(source, 'backup.pub'), 'utf8').trim();

    const target = join(dir, 'restored');
    const restored = await ledgerdRun(['restore', '--from', file, '--data-dir', target, '--identity', identity, '--verify-key', key]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(readFileSync(join(target, 'daemon.key'), 'utf8')).toBe(readFileSync(join(source, 'daemon.key'), 'utf8'));
    const checked = await ledgerdRun(['check', '--data-dir', target]);
    expect(checked.code, checked.stdout).toBe(0);
    const copy = await startDaemon({ dataDir: target });
    try {
      const balances = await client(copy.url, keys.customers.bob!).get('/v1/accounts/did:ledger:acct:bob/balances');
      expect(JSON.stringify(balances.body)).toContain('"7"');
    } finally {
      expect(await copy.stop()).toBe(0);
    }

    // Encrypted by `age` itself (from the plain backup it decrypted), restored by ledgerd.
    const byAge = join(dir, 'by-age.age');
    writeFileSync(join(dir, 'plain.backup'), decrypted);
    execFileSync('age', ['-r', recipient, '-o', byAge, join(dir, 'plain.backup')]);
    const fromAge = await ledgerdRun(['restore', '--from', byAge, '--data-dir', join(dir, 'from-age'), '--identity', identity, '--verify-key', key]);
    expect(fromAge.code, fromAge.stderr).toBe(0);

    // Without the identity, with another one, or altered in one byte: refused, nothing made.
    const other = join(dir, 'other.txt');
    execFileSync('age-keygen', ['-o', other], { stdio: 'ignore' });
    const altered = join(dir, 'altered.age');
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 100]! ^= 1;
    writeFileSync(altered, flipped);
    for (const [from, flags, says] of [
      [file, [], 'give its identity file with --identity'],
      [file, ['--identity', other], 'does not decrypt'],
      [altered, ['--identity', identity], 'does not decrypt'],
      [join(dir, 'plain.backup'), ['--identity', identity], 'is not encrypted'],
    ] as const) {
      const into = join(newDir(), 'r');
      const r = await ledgerdRun(['restore', '--from', from, '--data-dir', into, '--verify-key', key, ...flags]);
      expect(r.code, `${from} ${flags.join(' ')}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toContain(says);
      expect(noBookIn(into)).toBe(true);
    }
  }, slowTestMs);
});

describe('the liabilities key in backups (CONTRACT 12.2)', () => {
  it('rides in an encrypted backup, so the restored book proves its checkpoints as the source did, and never in a plain one', async () => {
    const dir = newDir();
    const source = join(dir, 'source');
    const keys = await writeBook(source, { alice: 500n, bob: 20n });
    addConfig(source, { settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 2 }, backup: { allowPlaintext: true } });
    const identity = join(dir, 'identity.txt');
    execFileSync('age-keygen', ['-o', identity], { stdio: 'ignore' });
    const recipient = execFileSync('age-keygen', ['-y', identity], { encoding: 'utf8' }).trim();
    const proofPath = '/v1/accounts/did:ledger:acct:alice/liabilities?checkpoint=1&asset=USD';
    const daemon = await startDaemon({ dataDir: source });
    let proof: unknown;
    try {
      const op = client(daemon.url, keys.operator);
      expect((await op.post('/v1/ops/checkpoints', {}, undefined, { 'client-key': 'cp-1' })).status).toBeLessThan(300);
      await until(async () => {
        await op.post('/v1/ops/layer/blocks', { count: 1 });
        return (await op.get('/v1/checkpoints/1')).body.status;
      }, (status) => status === 'final');
      const answered = await client(daemon.url, keys.customers.alice!).get(proofPath);
      expect(answered.status, answered.text).toBe(200);
      proof = answered.body;
      const plain = await op.get('/v1/ops/backup');
      expect(plain.status).toBe(200);
      expect(Object.keys(JSON.parse(plain.text.split('\n')[0]!).files).sort()).toEqual(['clerk.key', 'clerk.pub', 'daemon.key']);
      expect(plain.text).not.toContain(readFileSync(join(source, 'liabilities.key'), 'utf8').trim());
      const taken = await ctl(['ops', 'backup', '--out', join(dir, 'book.age'), '--recipient', recipient], daemon.url, keys.operator);
      expect(taken.code, taken.stderr).toBe(0);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
    const target = join(dir, 'restored');
    const restored = await ledgerdRun(['restore', '--from', join(dir, 'book.age'), '--data-dir', target, '--identity', identity, '--verify-key', readFileSync(join(source, 'backup.pub'), 'utf8').trim()]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(readFileSync(join(target, 'liabilities.key'), 'utf8')).toBe(readFileSync(join(source, 'liabilities.key'), 'utf8'));
    const copy = await startDaemon({ dataDir: target });
    try {
      expect((await client(copy.url, keys.customers.alice!).get(proofPath)).body).toEqual(proof);
    } finally {
      expect(await copy.stop()).toBe(0);
    }
  }, slowTestMs);
});

describe('a backup client that stops reading', () => {
  it('is cut off after backup.stallTimeoutMs, freeing the one backup slot and its snapshot', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 1n });
    // A book whose backup outgrows every socket buffer between the daemon and a client that reads nothing.
    const store = await LevelStore.open(join(dir, 'book'));
    try {
      const filler = 'f'.repeat(8 * 1024);
      for (let batch = 0; batch < 6; batch++) {
        await store.write(Array.from({ length: 500 }, (_, i) => ({ type: 'put' as const, key: `chal/${randomBytes(32).toString('hex')}`, value: `${filler}${batch}${i}` })), false);
      }
    } finally {
      await store.close();
    }
    addConfig(dir, { backup: { allowPlaintext: true, stallTimeoutMs: 1_000 } });
    const daemon = await startDaemon({ dataDir: dir });
    try {
      const url = new URL(daemon.url);
      const stalled = connect(Number(url.port), url.hostname);
      let closed = false;
      stalled.on('close', () => (closed = true));
      stalled.on('error', () => {});
      stalled.write(`GET /v1/ops/backup HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${keys.operator}\r\n\r\n`);
      // Reads the first bytes (the backup began), then nothing more.
      await new Promise<void>((res) => stalled.once('data', () => res()));
      stalled.pause();
      const op = client(daemon.url, keys.operator);
      expect(refusalOf(await op.get('/v1/ops/backup')).error).toBe('ERR-DecisionUnavailable');
      let served = false;
      for (let i = 0; i < 50 && !served; i++) {
        await new Promise((res) => setTimeout(res, 200));
        const r = await op.get('/v1/ops/backup');
        if (r.status === 200) served = true;
        else expect(refusalOf(r).error).toBe('ERR-DecisionUnavailable');
      }
      expect(served).toBe(true);
      stalled.resume();
      await until(async () => closed, (c) => c);
      expect([...daemon.stdout, ...daemon.stderr].join('\n')).toContain('cut off');
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  }, slowTestMs);
});
