/**
 * Bytes the book keeps per request, for each command a customer can send (docs/reliability.md,
 * Bytes kept per request): a real ledgerd on LevelDB, each command sent `--count` times
 * under fresh client keys, the daemon stopped after each kind and the book's records and
 * bytes (keys and values) counted. Prints a table; nothing is asserted.
 *
 *   npm run build && node dist/bench/store-bytes.js [--count 20]
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { builtInPrincipals } from '../src/auth/authority.js';
import { credentialWrites, principalCredentialWrites } from '../src/auth/credentials.js';
import { drawApiKey } from '../daemon/book.js';
import { importGenesis } from '../src/book/genesis.js';
import type { CredentialId, IdentityId } from '../src/model/values.js';
import { LevelStore } from '../src/store/level.js';
import { benchAccount, fundedCustomersGenesis } from './genesis.js';
import { startServer, stopServer } from './http-load.js';

const { values: args } = parseArgs({ options: { count: { type: 'string', default: '20' } } });
const count = Number(args.count);
const dir = mkdtempSync(join(tmpdir(), 'ledgerd-bytes-'));
const operatorKey = drawApiKey();
const customerKeys = [drawApiKey(), drawApiKey()];
const [b0, b1] = [benchAccount(0), benchAccount(1)];

const level = await LevelStore.open(join(dir, 'book'));
try {
  const now = Date.now();
  const extras = [
    ...principalCredentialWrites(builtInPrincipals, { operator: operatorKey, identities: drawApiKey() }, now),
    ...customerKeys.flatMap((key, i) =>
      credentialWrites({ id: `did:ledger:cred:b${i}` as CredentialId, identity: `did:ledger:id:b${i}` as IdentityId, scheme: 'api-key', verifier: null, scope: null, createdAtMs: now, webauthnId: null, counter: 0 }, key),
    ),
  ];
  await importGenesis(level, fundedCustomersGenesis(2, 10n ** 12n), now, extras);
} finally {
  await level.close();
}
writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ settlement: { blockIntervalMs: 0, checkpointIntervalMs: 0, finalityDepth: 1 } }));

let server = await startServer(['bin/ledgerd', 'serve', '--data-dir', dir, '--listen', '127.0.0.1:0', '--log-level', 'warn']);
let keyN = 0;
async function call(method: 'POST' | 'GET', path: string, token: string | null, body?: unknown): Promise<any> {
  const res = await request(`${server.url}${path}`, {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }), 'client-key': `bytes-${++keyN}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return JSON.parse(text);
}
/** Waits for an operation's decision; its view. */
async function decided(ref: string): Promise<any> {
  for (let i = 0; i < 1000; i++) {
    const view = await call('GET', `/v1/operations/${ref}`, operatorKey);
    if (view.state !== 'Received') return view;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${ref} was not decided`);
}
const send = async (path: string, body: unknown, token = customerKeys[0]!) => {
  const reply = await call('POST', path, token, body);
  return reply.operation_reference?.startsWith('direct-') ? reply : decided(reply.operation_reference);
};

async function measure(): Promise<{ records: number; bytes: number }> {
  await stopServer(server.child);
  const store = await LevelStore.open(join(dir, 'book'));
  let records = 0;
  let bytes = 0;
  try {
    for await (const [key, value] of store.entries({ gte: '', limit: Number.MAX_SAFE_INTEGER })) {
      records++;
      bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
    }
  } finally {
    await store.close();
  }
  server = await startServer(['bin/ledgerd', 'serve', '--data-dir', dir, '--listen', '127.0.0.1:0', '--log-level', 'warn']);
  return { records, bytes };
}

// A failed run leaves no daemon behind.
process.on('exit', () => server.child.kill());
const ed25519PublicKeyHex = () => generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('hex');

const rows: string[] = [];
let before = await measure();
/** Sends one kind `count` times (`body(i)` for the i-th) and records what the book grew by, per request. */
async function kind(name: string, sendOne: (i: number) => Promise<unknown>, times = count): Promise<void> {
  for (let i = 0; i < times; i++) await sendOne(i);
  const after = await measure();
  rows.push(`| ${name} | ${Math.round((after.bytes - before.bytes) / times)} | ${((after.records - before.records) / times).toFixed(1)} |`);
  before = after;
}

// Setup the customer commands need: USD bound on the layer, a final checkpoint.
await decided((await call('POST', '/v1/ops/assets/USD/binding', operatorKey, { location: 'ab'.repeat(32) })).operation_reference);
for (let i = 0; i < 4; i++) await call('POST', '/v1/ops/layer/blocks', operatorKey, { count: 1 }), await new Promise((r) => setTimeout(r, 50));
before = await measure();

await kind('POST /v1/transfers (one leg)', () => send('/v1/transfers', { legs: [{ from: b0, to: b1, asset: 'USD', amount: '1' }] }));
const reservations: string[] = [];
await kind('POST /v1/reservations', async () => reservations.push((await send('/v1/reservations', { payer: b0, asset: 'USD', amount: '10' })).operation_reference));
const half = Math.floor(count / 2);
await kind('POST /v1/reservations/{ref}/capture', (i) => send(`/v1/reservations/${reservations[i]}/capture`, { to: b1, amount: '10' }), half);
await kind('POST /v1/reservations/{ref}/release', (i) => send(`/v1/reservations/${reservations[half + i]}/release`, {}), half);
const opened: string[] = [];
await kind('POST /v1/accounts (delegated)', async () => opened.push((await send('/v1/accounts', { custody: 'delegated', kind: 'customer', owner: 'did:ledger:id:b0' })).result.account));
await kind('POST /v1/accounts/{account}/close', (i) => send(`/v1/accounts/${opened[i]}/close`, {}));
const grants: string[] = [];
await kind('POST /v1/grants', async () => grants.push((await send('/v1/grants', { kind: 'delegated', principal: 'did:ledger:id:b1', subject: { account: b0 }, ops: ['transfer'], per_operation: '5' })).result.grant));
await kind('POST /v1/grants/{grant}/revoke', (i) => send(`/v1/grants/${grants[i]}/revoke`, {}));
await kind('POST /v1/credentials (key)', () => send('/v1/credentials', { marker: 'ordinary', scheme: 'key', verifier: ed25519PublicKeyHex() }));
await kind('POST /v1/credentials (api-key)', () => send('/v1/credentials', { marker: 'ordinary', scheme: 'api-key' }));
await kind('POST /v1/withdrawals', () => send('/v1/withdrawals', { account: b0, asset: 'USD', amount: '1', destination: { account: 'cd'.repeat(32) } }));
await call('POST', '/v1/ops/checkpoints', operatorKey, {});
await call('POST', '/v1/ops/layer/blocks', operatorKey, { count: 2 });
await new Promise((r) => setTimeout(r, 200));
const covered = (await call('GET', '/v1/checkpoints', operatorKey)).items[0].entry_sequence as number;
before = await measure();
await kind('POST /v1/disclosures (flows_bound over every entry)', () =>
  send('/v1/disclosures', { subject: b0, assertion: { shape: 'flows_bound', asset: 'USD', bound: '1', bound_kind: 'at_least', direction: 'out', from_sequence: 1, to_sequence: covered }, recipient_reference: 'ef'.repeat(32) }),
);
await kind('POST /v1/auth/challenge (no bearer)', () => call('POST', '/v1/auth/challenge', null, { purpose: 'authenticate' }));
await stopServer(server.child);
rmSync(dir, { recursive: true, force: true });

console.log(`${count} requests of each kind (captures and releases ${half}); bytes are keys and values, event chunks included`);
console.log('| command | bytes kept per request | records per request |');
console.log('|---|---|---|');
for (const row of rows) console.log(row);
