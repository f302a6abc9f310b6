/**
 * No secret in clear (CONTRACT 1 and 5): after API keys and sessions are issued and
 * used through the real routes, with the daemon logging at its most verbose, neither
 * any file under the data dir (LevelDB's log, tables and manifest included, read as raw
 * bytes) nor the daemon's output holds any of them. The operator.key and
 * identities.key files hold their own key and nothing else does.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { hashToken } from '../../src/auth/credentials.js';
import { SoftwareAuthenticator } from '../support/authenticator.js';
import { type Daemon, client, decided, removeDir, startDaemon, tempDir, writeBook } from './support.js';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

let daemon: Daemon | null = null;
const dir = tempDir();
afterAll(async () => {
  if (daemon !== null) await daemon.stop();
  await removeDir(dir);
});

it('keeps every API key and session token out of the data dir and the logs', async () => {
  const keys = await writeBook(dir, { alice: 100n });
  daemon = await startDaemon({ dataDir: dir, env: { LEDGERD_LOG_LEVEL: 'trace' } });
  const url = daemon.url;
  const as = (token: string | null) => client(url, token as string);
  const issued: string[] = [keys.operator, keys.identities, keys.customers.alice!];

  // API keys: a new identity's, one into alice's own set, and one on behalf of alice.
  const created = await as(keys.identities).post('/v1/identities', { scheme: 'api-key' }, undefined, { 'client-key': 'secret-1' });
  const own = await as(keys.customers.alice!).post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key' }, undefined, { 'client-key': 'secret-2' });
  const onBehalf = await as(keys.identities).post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key' }, undefined, { 'client-key': 'secret-3', 'on-behalf-of': 'did:ledger:id:alice' });
  for (const r of [created, own, onBehalf]) {
    expect(r.body.api_key, r.text).toMatch(/^ledger_ak_/);
    issued.push(r.body.api_key);
  }
  // Repeats and operation views carry no key.
  expect((await as(keys.customers.alice!).post('/v1/credentials', { marker: 'ordinary', scheme: 'api-key' }, undefined, { 'client-key': 'secret-2' })).body.api_key).toBeNull();

  // Sessions: a passkey identity signs in twice.
  const auth = new SoftwareAuthenticator();
  const challenge = async (purpose: string) => (await as(null).post('/v1/auth/challenge', { purpose })).body.challenge as string;
  const registered = await as(keys.identities).post('/v1/identities', { scheme: 'webauthn-es256', passkey: auth.register(await challenge('register')) });
  const credential = (await decided(as(keys.identities), registered.body.operation_reference)).body.result.credential as string;
  for (let i = 0; i < 2; i++) {
    const session = await as(null).post('/v1/auth/passkey', { assertion: auth.assert(await challenge('authenticate')), credential });
    expect(session.status, session.text).toBe(200);
    issued.push(session.body.session);
  }

  // Every token is used as a bearer, so a logged header would show it.
  for (const token of issued) expect((await as(token).get('/v1/whoami')).status).toBe(200);
  expect(await daemon.stop()).toBe(0);

  const principalKeyFiles: Record<string, string> = { 'operator.key': keys.operator, 'identities.key': keys.identities };
  const files = filesUnder(dir);
  expect(files.some((f) => relative(dir, f).startsWith('book'))).toBe(true);
  for (const file of files) {
    const bytes = readFileSync(file);
    const own = principalKeyFiles[relative(dir, file)];
    for (const token of issued) {
      if (token === own) continue;
      expect(bytes.includes(Buffer.from(token)), `${relative(dir, file)} holds a secret in clear`).toBe(false);
    }
  }
  // The grep does see the book's raw bytes: each token's hash, which is all it keeps, is there.
  for (const token of issued.slice(3)) expect(files.some((f) => readFileSync(f).includes(Buffer.from(hashToken(token)))), 'the hash of an issued token is stored').toBe(true);
  const output = [...daemon.stdout, ...daemon.stderr].join('\n');
  expect(output.length).toBeGreaterThan(0);
  for (const token of issued) expect(output.includes(token), 'the daemon logged a secret').toBe(false);
});
