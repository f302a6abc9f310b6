/**
 * Black-box harness: a book written into a temp data dir, then the built `ledgerd`
 * (`node bin/ledgerd serve`, from dist/) started on a loopback port chosen by the
 * system, and a small HTTP client over undici.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { afterAll, beforeAll, expect } from 'vitest';
import { builtInPrincipals } from '../../src/auth/authority.js';
import { credentialWrites, principalCredentialWrites } from '../../src/auth/credentials.js';
import { importGenesis } from '../../src/book/genesis.js';
import { LevelStore } from '../../src/store/level.js';
import { decodeBalance, encodeBalance } from '../../src/model/codec.js';
import { prefixEnd } from '../../src/model/keys.js';
import type { CredentialId, IdentityId } from '../../src/model/values.js';
import { customersGenesis } from '../support/book.js';
import { type StoreMatrix, useStores } from '../support/stores.js';
import { bookIdentity, placeOf } from '../../daemon/book.js';
import { type StoreConfig, postgresStoreOf } from '../../daemon/config.js';

/** Set by `daemonsOnPostgres`: the cluster this file's daemons keep their books in. */
let postgres: StoreMatrix | null = null;
/** Whether that cluster keeps what it acknowledges (fsync and synchronous_commit on): its daemons serve degraded when not. */
let postgresDurable = false;

/**
 * The daemons of this test file keep their books on PostgreSQL (the store matrix): a
 * private cluster for the file, a database per book (durable only when asked: the others
 * test what ledgerd does, not what the disk keeps). Call before `useDaemon`.
 */
export function daemonsOnPostgres(options: { durable?: boolean } = {}): StoreMatrix {
  postgres = useStores(options);
  postgresDurable = options.durable === true;
  return postgres;
}

/** A book's database for this file's daemons: the `store` setting pointing at a fresh database. */
export async function postgresStore(leaseMs = 10_000, statementTimeoutMs = 5_000): Promise<Extract<StoreConfig, { kind: 'postgres' }>> {
  if (postgres === null) throw new Error('call daemonsOnPostgres() first');
  const connection = await postgres.database();
  return postgresStoreOf({ url: connection.url, poolSize: connection.poolSize, leaseMs, statementTimeoutMs, durability: postgresDurable ? 'refuse' : 'degraded' });
}

/** Adds settings to the data dir's ledgerd.json (made if absent). */
export function addConfig(dataDir: string, settings: Record<string, unknown>): void {
  const path = join(dataDir, 'ledgerd.json');
  const existing = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>) : {};
  writeFileSync(path, JSON.stringify({ ...existing, ...settings }));
}

/** The repository root (trailing slash), also from the compiled copy in dist/ that bench scripts import. */
export const repoRoot = new URL(import.meta.url.includes('/dist/test/daemon/') ? '../../../' : '../../', import.meta.url).pathname;
export const ledgerd = join(repoRoot, 'bin/ledgerd');

export function tempDir(prefix = 'ledgerd-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface Keys {
  readonly operator: string;
  readonly identities: string;
  /** API keys of the customers, by name. */
  readonly customers: Record<string, string>;
}

/**
 * Writes a sealed book (on PostgreSQL `on` a given database, or after `daemonsOnPostgres`) with the given customers (each `did:ledger:id:<name>` owning
 * `did:ledger:acct:<name>`, funded in USD from the treasury) and an API key for each,
 * as `ledgerd init` would lay it out. Customers' keys stand in for the credentials
 * issue, which registers them through the API.
 */
export async function writeBook(dataDir: string, customers: Record<string, bigint>, on?: Extract<StoreConfig, { kind: 'postgres' }>): Promise<Keys> {
  await mkdir(dataDir, { recursive: true });
  const keys: Keys = {
    operator: `op-key-${Math.random().toString(36).slice(2)}${'x'.repeat(32)}`,
    identities: `id-key-${Math.random().toString(36).slice(2)}${'y'.repeat(32)}`,
    customers: Object.fromEntries(Object.keys(customers).map((name) => [name, `${name}-key-${Math.random().toString(36).slice(2)}${'z'.repeat(32)}`])),
  };
  const nowMs = Date.now();
  const extras = [
    ...principalCredentialWrites(builtInPrincipals, keys, nowMs),
    ...Object.entries(keys.customers).flatMap(([name, key]) =>
      credentialWrites({ id: `did:ledger:cred:${name}` as CredentialId, identity: `did:ledger:id:${name}` as IdentityId, scheme: 'api-key', verifier: null, scope: null, createdAtMs: nowMs, webauthnId: null, counter: 0 }, key),
    ),
  ];
  if (on !== undefined || postgres !== null) {
    // Through the daemon's own way of building a book on PostgreSQL: aside, then renamed into place, bound to the data dir.
    const store = on ?? (await postgresStore());
    addConfig(dataDir, { store });
    const building = await placeOf(dataDir, store).build('init');
    await importGenesis(building.store, customersGenesis(customers), nowMs, extras);
    await building.place(await bookIdentity(dataDir));
  } else {
    const store = await LevelStore.open(join(dataDir, 'book'));
    try {
      await importGenesis(store, customersGenesis(customers), nowMs, extras);
    } finally {
      await store.close();
    }
  }
  writeFileSync(join(dataDir, 'operator.key'), `${keys.operator}\n`, { mode: 0o600 });
  writeFileSync(join(dataDir, 'identities.key'), `${keys.identities}\n`, { mode: 0o600 });
  return keys;
}

export interface Daemon {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly process: ChildProcess;
  readonly stdout: string[];
  readonly stderr: string[];
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** What it wrote last (stdout, then stderr): why it did not stop cleanly, for an assertion's message. */
  lastLines(): string;
}

/** Starts `ledgerd serve` and resolves once it prints its readiness line. */
/** How long a test waits for `ledgerd serve` to say it listens (a few seconds on a loaded 2-core machine). */
const daemonReadyWaitMs = 60_000;

export async function startDaemon(options: { dataDir: string; args?: string[]; env?: NodeJS.ProcessEnv; listen?: string; onStderr?: (line: string) => void }): Promise<Daemon> {
  const args = [ledgerd, 'serve', '--data-dir', options.dataDir, '--listen', options.listen ?? '127.0.0.1:0', ...(options.args ?? [])];
  const child = spawn(process.execPath, args, { env: { ...process.env, LEDGERD_LOG_LEVEL: 'warn', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr.push(line);
    options.onStderr?.(line);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // A start that never says it listens fails here, naming what ledgerd said, instead of as a test's or hook's bare timeout.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ledgerd did not say it was listening within ${daemonReadyWaitMs} ms:\n${[...stdout, ...stderr].join('\n')}`));
    }, daemonReadyWaitMs);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      stdout.push(line);
      const m = /^ledgerd listening on (http:\/\/\S+)$/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`ledgerd exited with ${code} before it was ready:\n${stderr.join('\n')}`));
    });
  });
  return {
    url,
    port: Number(new URL(url).port),
    dataDir: options.dataDir,
    process: child,
    stdout,
    stderr,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
    lastLines: () => [...stdout.slice(-20), ...stderr.slice(-20)].join('\n'),
  };
}

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** The parsed JSON body (undefined when not JSON); tests read it freely. */
  readonly body: any;
}

export interface Client {
  get(path: string, token?: string | null, headers?: Record<string, string>): Promise<Reply>;
  post(path: string, body: unknown, token?: string | null, headers?: Record<string, string>): Promise<Reply>;
  raw(method: string, path: string, options: { body?: string; headers?: Record<string, string> }): Promise<Reply>;
}

type Lazy<T> = T | (() => T);
const resolve = <T>(value: Lazy<T>): T => (typeof value === 'function' ? (value as () => T)() : value);

/** A client of `baseUrl` with a bearer; both may be given lazily (read at each request). */
export function client(baseUrl: Lazy<string>, defaultToken: Lazy<string>): Client {
  const raw: Client['raw'] = async (method, path, { body, headers = {} }) => {
    const res = await request(resolve(baseUrl) + path, { method: method as 'GET', body, headers });
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.statusCode, headers: res.headers, text, body: parsed };
  };
  const auth = (token: string | null | undefined): Record<string, string> => {
    const t = token === undefined ? resolve(defaultToken) : token;
    return t === null ? {} : { authorization: `Bearer ${t}` };
  };
  return {
    raw,
    get: (path, token, headers = {}) => raw('GET', path, { headers: { ...auth(token), ...headers } }),
    post: (path, body, token, headers = {}) =>
      raw('POST', path, { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', ...auth(token), ...headers } }),
  };
}

/** Polls an operation until it leaves Received (decisions follow acknowledgements closely). */
export async function decided(api: Client, ref: string, token?: string): Promise<Reply> {
  for (let i = 0; i < 200; i++) {
    const r = await api.get(`/v1/operations/${ref}`, token);
    if (r.status !== 200 || r.body.state !== 'Received') return r;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`operation ${ref} was not decided`);
}

/** Polls `read` until `done` holds of what it answers (about 3 s at most); what it answered then. */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await read();
    if (done(v)) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the condition never held');
}

/** Expects a refusal: the status, the code, and the `{error, description}` shape only. */
export function refusalOf(r: Reply): { status: number; error: string } {
  if (typeof r.body !== 'object' || r.body === null || Object.keys(r.body).sort().join() !== 'description,error' || typeof r.body.description !== 'string') {
    throw new Error(`not a refusal: ${r.status} ${r.text}`);
  }
  return { status: r.status, error: r.body.error };
}

/** The refusal a request is answered with (see refusalOf). */
export async function refused(reply: Promise<Reply>): Promise<{ status: number; error: string }> {
  return refusalOf(await reply);
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** Temp dirs for one test file, removed after its tests: call the result for a new one. */
export function useTempDirs(): () => string {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await removeDir(d);
  });
  return () => {
    const d = tempDir();
    dirs.push(d);
    return d;
  };
}

export interface SharedDaemon {
  readonly daemon: Daemon;
  readonly keys: Keys;
  readonly dir: string;
  /** A client acting as the operator, the identities principal or a customer by name. */
  as(who: 'operator' | 'identities' | string): Client;
}

/**
 * One daemon for a whole test file: a book with `customers`, an optional config file
 * and environment, started before the file's tests and stopped (exit code 0 expected) after them.
 */
export function useDaemon(customers: Record<string, bigint>, config?: Record<string, unknown>, env?: NodeJS.ProcessEnv): SharedDaemon {
  let state: { daemon: Daemon; keys: Keys; dir: string } | null = null;
  const get = () => {
    if (state === null) throw new Error('the daemon is not started yet');
    return state;
  };
  beforeAll(async () => {
    const dir = tempDir();
    const keys = await writeBook(dir, customers);
    if (config) addConfig(dir, config);
    state = { dir, keys, daemon: await startDaemon({ dataDir: dir, env }) };
    // The matrix means it: a daemon of a PostgreSQL file has no LevelDB book beside.
    if (postgres !== null) expect(existsSync(join(dir, 'book'))).toBe(false);
  });
  afterAll(async () => {
    const { daemon, dir } = get();
    try {
      expect(await daemon.stop(), daemon.lastLines()).toBe(0);
    } finally {
      await removeDir(dir);
    }
  });
  const tokenOf = (who: string) => () => {
    const { keys } = get();
    if (who === 'operator' || who === 'identities') return keys[who];
    const key = keys.customers[who];
    if (key === undefined) throw new Error(`no customer ${who}`);
    return key;
  };
  return {
    get daemon() {
      return get().daemon;
    },
    get keys() {
      return get().keys;
    },
    get dir() {
      return get().dir;
    },
    as: (who) => client(() => get().daemon.url, tokenOf(who)),
  };
}

/** Every movement of an account, oldest first, through every page. */
export async function movements(api: Client, account: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const r = await api.get(`/v1/movements?account=${account}&limit=1000${cursor === null ? '' : `&cursor=${cursor}`}`);
    expect(r.status).toBe(200);
    out.push(...r.body.movements);
    cursor = r.body.next ?? null;
  } while (cursor !== null);
  return out;
}

/** `ledgerd SUBCOMMAND ...` to its end: exit code and output. */
export async function ledgerdRun(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [ledgerd, ...args], { timeout: 60_000, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Records and bytes (keys and values) under `prefix` in a stopped daemon's LevelDB book. */
export async function bookRecords(dataDir: string, prefix = ''): Promise<{ records: number; bytes: number }> {
  const store = await LevelStore.open(join(dataDir, 'book'));
  let records = 0;
  let bytes = 0;
  try {
    for await (const [key, value] of store.entries({ gte: prefix, ...(prefix === '' ? {} : { lt: prefixEnd(prefix) }), limit: Number.MAX_SAFE_INTEGER })) {
      records++;
      bytes += key.length + value.length;
    }
  } finally {
    await store.close();
  }
  return { records, bytes };
}

/**
 * Plants a wrong balance in a stopped LevelDB book: `account`'s available USD raised by `byMinor`,
 * its journal and the kept totals left as they were (so the book still opens, and a check names it).
 */
export async function plantWrongBalance(dataDir: string, account: string, byMinor: bigint): Promise<void> {
  const store = await LevelStore.open(join(dataDir, 'book'), { createIfMissing: false });
  try {
    const key = `bal/${account}/USD`;
    const balance = decodeBalance(JSON.parse((await store.get(key))!));
    await store.write([{ type: 'put', key, value: JSON.stringify(encodeBalance({ ...balance, available: balance.available + byMinor })) }], true);
  } finally {
    await store.close();
  }
}
