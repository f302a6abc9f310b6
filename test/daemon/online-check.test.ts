/**
 * The online check (POST/GET /v1/ops/check, `ledgerctl ops check`) against a real ledgerd
 * serving a LevelDB book, which `ledgerd check` cannot open meanwhile: a sound book is
 * consistent; a balance planted wrong before the daemon started is named, and the CLI
 * exits 1; one check at a time. The time bound (with a clock that runs out) and the stop at shutdown on the
 * module itself.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LevelStore } from '../../src/store/level.js';
import { OnlineCheck } from '../../daemon/online-check.js';
import { ledgerctl } from '../cli/support/ledgerctl.js';
import { ledgerctlOnTerminal } from '../cli/support/terminal.js';
import { type Client, type Daemon, client, decided, plantWrongBalance, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
const carol = 'did:ledger:acct:carol';

describe('a served book, sound', () => {
  let daemon: Daemon;
  let keys: Awaited<ReturnType<typeof writeBook>>;
  let op: Client;
  beforeAll(async () => {
    const dir = newDir();
    keys = await writeBook(dir, { alice: 1_000n, bob: 0n });
    daemon = await startDaemon({ dataDir: dir });
    op = client(() => daemon.url, keys.operator);
  });
  afterAll(async () => {
    expect(await daemon.stop(), daemon.lastLines()).toBe(0);
  });

  it('is consistent, checked while it serves, through ledgerctl ops check; a GET follows it', async () => {
    expect((await op.get('/v1/ops/check')).body).toEqual({ state: 'none' });
    const alice = client(() => daemon.url, keys.customers.alice!);
    for (const amount of ['1', '2', '3']) {
      const r = await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount }] });
      expect((await decided(alice, r.body.operation_reference)).body.state).toBe('Completed');
    }
    const env = { LEDGER_URL: daemon.url, LEDGER_TOKEN: keys.operator, LEDGERCTL_CONFIG_DIR: newDir() };
    const run = await ledgerctl(['ops', 'check', '-o', 'table'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^check: \d+ accounts, \d+ balances, \d+ journal entries, journal position \d+, 0 checkpoints: consistent in [0-9.]+ s\n$/);
    const json = await ledgerctl(['ops', 'check', '--follow', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const body = json.json();
    expect(body).toMatchObject({ state: 'consistent', problem_count: 0, problems: [] });
    // Three transfers of two entries each, besides the openings.
    expect(body.postings).toBeGreaterThanOrEqual(6);
    expect(body.finished_at).toBeGreaterThanOrEqual(body.started_at);
  });
});

describe('a served book, checked twice at once', () => {
  let daemon: Daemon;
  let keys: Awaited<ReturnType<typeof writeBook>>;
  beforeAll(async () => {
    const dir = newDir();
    // Enough accounts that a check outlasts the requests sent together below.
    keys = await writeBook(dir, Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`c${i}`, 10n])));
    daemon = await startDaemon({ dataDir: dir });
  });
  afterAll(async () => {
    expect(await daemon.stop(), daemon.lastLines()).toBe(0);
  });

  it('runs one check at a time: a start meanwhile is refused ERR-DecisionUnavailable with Retry-After; an auditor may not start one', async () => {
    const op = client(() => daemon.url, keys.operator);
    const replies = await Promise.all(Array.from({ length: 4 }, () => op.post('/v1/ops/check', {})));
    expect(replies.filter((r) => r.status === 202)).toHaveLength(1);
    for (const refused of replies.filter((r) => r.status !== 202)) {
      expect(refused.status).toBe(503);
      expect(refused.body.error).toBe('ERR-DecisionUnavailable');
      expect(refused.headers['retry-after']).toMatch(/^[0-9]+$/);
    }
    const added = await op.post('/v1/ops/members', { name: 'reader', role: 'auditor', scheme: 'api-key' }, undefined, { 'client-key': 'check-auditor' });
    await decided(op, added.body.operation_reference);
    const auditor = client(() => daemon.url, added.body.api_key);
    expect((await auditor.post('/v1/ops/check', {})).body.error).toBe('ERR-NotAuthorised');
    while ((await auditor.get('/v1/ops/check')).body.state === 'running') await new Promise((res) => setTimeout(res, 20));
    expect((await auditor.get('/v1/ops/check')).body).toMatchObject({ state: 'consistent', accounts: 304 });
  });

  it('shows progress on a terminal while the check runs, then the summary alone on its line', async () => {
    const env = { LEDGER_URL: daemon.url, LEDGER_TOKEN: keys.operator, LEDGERCTL_CONFIG_DIR: newDir() };
    const run = await ledgerctlOnTerminal(['ops', 'check'], env);
    expect(run.code, run.screen).toBe(0);
    expect(run.screen).toMatch(/\r\x1b\[Kchecking: \d+ accounts, \d+ balances, \d+ journal entries/);
    // The progress line is cleared before the summary.
    expect(run.screen).toMatch(/\r\x1b\[Kcheck: 304 accounts, \d+ balances, \d+ journal entries, journal position \d+, 0 checkpoints: consistent in [0-9.]+ s\r?\n$/);
  });
});

describe('a served book, damaged', () => {
  let daemon: Daemon;
  let keys: Awaited<ReturnType<typeof writeBook>>;
  beforeAll(async () => {
    const dir = newDir();
    keys = await writeBook(dir, { alice: 100n, carol: 50n });
    // A balance planted wrong in the stopped book; the kept totals still sum to zero, so it serves.
    await plantWrongBalance(dir, carol, 5n);
    daemon = await startDaemon({ dataDir: dir });
  });
  afterAll(async () => {
    expect(await daemon.stop(), daemon.lastLines()).toBe(0);
  });

  it('names the damage and ledgerctl ops check exits 1', async () => {
    const env = { LEDGER_URL: daemon.url, LEDGER_TOKEN: keys.operator, LEDGERCTL_CONFIG_DIR: newDir() };
    const run = await ledgerctl(['ops', 'check', '-o', 'table'], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`${carol} USD: balance is available 55, reserved 0, encumbered 0; its journal entries sum to available 50`);
    expect(run.stdout).toMatch(/totals: USD keeps available -?\d+, reserved \d+, encumbered \d+; its balances sum to available -?\d+/);
    expect(run.stdout).toMatch(/: 2 problems in [0-9.]+ s\n$/);
    expect(run.stderr).toContain('the check ended damaged');
    const json = (await ledgerctl(['ops', 'check', '--follow', '--json'], env)).json();
    expect(json).toMatchObject({ state: 'damaged', problem_count: 2 });
    // The daemon's log says so at error level.
    expect(daemon.stderr.some((line) => line.includes('"online check ended"') && line.includes('"level":50'))).toBe(true);
  });
});

describe('OnlineCheck', () => {
  it('stops incomplete once its time is up or the daemon stops, and is consistent otherwise', async () => {
    const dir = newDir();
    await writeBook(dir, { alice: 100n, bob: 0n });
    const store = await LevelStore.open(join(dir, 'book'), { createIfMissing: false });
    try {
      // Each reading of the clock is 10 ms later: past a 15 ms bound by the second pass.
      let nowMs = 0;
      const checks = new OnlineCheck(() => (nowMs += 10), 15);
      let ended!: () => void;
      const end = new Promise<void>((resolve) => (ended = resolve));
      const run = checks.start(store, null, () => ended());
      expect(run.state).toBe('running');
      expect(checks.running).toBe(true);
      await end;
      expect(checks.running).toBe(false);
      expect(checks.latest).toMatchObject({ state: 'incomplete', reason: 'stopped after checkTimeMaxMs (15 ms)', report: null });
      // Room enough: consistent (this book has no daemon.key, which the check notes only when one is given).
      const roomy = new OnlineCheck(() => 0, 60_000);
      await new Promise<void>((resolve) => roomy.start(store, null, resolve));
      expect(roomy.latest).toMatchObject({ state: 'consistent', reason: null });
      // Stopped by the daemon's shutdown: at its next page, incomplete.
      roomy.start(store, null, () => {});
      expect(roomy.running).toBe(true);
      await roomy.stop();
      expect(roomy.latest).toMatchObject({ state: 'incomplete', reason: 'stopped: the daemon is shutting down' });
    } finally {
      await store.close();
    }
  });
});
