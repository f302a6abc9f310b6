/**
 * Issue 25 item 8: progress on long work, black-box through the built programs. `ledgerd init
 * --genesis`, `restore`, `migrate` and `check` end with one summary line on stderr when it is not
 * a terminal, counting the entries the work really wrote or read; on a terminal (a pty) they draw
 * one line in place, at most every 100 ms (entries, rate, share done and time left: each knows its
 * whole) and erase it before their result, leaving no line behind.
 * `ledgerctl ops backup` prints its size for people and refuses to replace a file without --force.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configDir, ledgerctl } from '../cli/support/ledgerctl.js';
import { onTerminal } from '../cli/support/terminal.js';
import { keys } from '../../src/model/keys.js';
import { fixtureBook, layFixtureBook } from '../support/fixture-books.js';
import { bookRecords, ledgerdRun, useDaemon, useTempDirs } from './support.js';

const newDir = useTempDirs();
const stageOneBackup = new URL('../fixtures/layout-1/book.backup', import.meta.url).pathname;

/** The one summary line a piece of work ends with when stderr is not a terminal. */
const summaryLine = (label: string, verb: string) => `${label}: [\\d,]+ entries ${verb} in \\d+\\.\\d s \\([\\d,]+/s\\)`;
/** Stderr holding the summary line (after a warning, say). */
const summary = (label: string, verb: string) => new RegExp(`^${summaryLine(label, verb)}$`, 'm');
/** Stderr that is the summary line and nothing else. */
const onlySummary = (label: string, verb: string) => new RegExp(`^${summaryLine(label, verb)}\n$`);
/** A progress line drawn in place on a terminal: from the line's start, the line erased first. */
const drawn = (label: string, verb: string) => new RegExp(`\\r\\x1b\\[K${label}: [\\d,]+ entries ${verb}, [\\d,]+/s`);
/** A progress line that tells the share done and the time left. */
const timeLeft = (label: string, verb: string) => new RegExp(`\\r\\x1b\\[K${label}: [\\d,]+ entries ${verb}, [\\d,]+/s, \\d+%, \\d+:\\d\\d left`);
/** The count of a summary line. */
const countOf = (stderr: string, label: string) => Number(new RegExp(`^${label}: ([\\d,]+) entries`, 'm').exec(stderr)?.[1]?.replaceAll(',', ''));

/**
 * A terminal's screen that ends clean: after the last erase comes the result, with no progress
 * line drawn after it, and the line was drawn at most every 100 ms (`ms`: the run's wall time).
 */
function endsClean(screen: string, result: string, ms: number): void {
  const tail = screen.slice(screen.lastIndexOf('\x1b[K') + 3);
  expect(tail.startsWith(result), tail).toBe(true);
  expect(tail).not.toMatch(/entries \w+, [\d,]+\/s/);
  expect(screen.split('\x1b[K').length - 2).toBeLessThanOrEqual(ms / 100 + 1);
}

/** `bin args` on a pty, with the wall time it took. */
async function timedOnTerminal(bin: string, args: string[]) {
  const startedAt = performance.now();
  const run = await onTerminal(bin, args);
  return { ...run, ms: performance.now() - startedAt };
}

/** A layout-1 data dir: the stage-1 fixture book with `aliases` more alias records, so migrating it takes a while. */
async function layout1Book(aliases: number): Promise<string> {
  const dir = newDir();
  await layFixtureBook(fixtureBook('layout-1'), dir, (entries) => {
    for (let i = 0; i < aliases; i++) entries.set(keys.alias('legacy-crm', `customer ${i}`), 'did:ledger:acct:legacy');
  });
  return dir;
}

/** A genesis file of `customers` funded customers. */
function genesisFile(customers: number): string {
  const ids = Array.from({ length: customers }, (_, i) => i);
  const genesis = {
    assets: [{ id: 'USD', kind: 'fiat', precision: 2 }],
    identities: ids.map((i) => `did:ledger:id:c${i}`),
    accounts: [
      { account: 'did:ledger:acct:treasury-USD', owner: 'did:ledger:id:operator', kind: 'treasury', treasury_limits: { USD: String(customers * 100) } },
      ...ids.map((i) => ({ account: `did:ledger:acct:c${i}`, owner: `did:ledger:id:c${i}`, kind: 'customer' })),
    ],
    openings: ids.flatMap((i) => [
      { account: 'did:ledger:acct:treasury-USD', asset: 'USD', amount: '100', direction: 'debit' },
      { account: `did:ledger:acct:c${i}`, asset: 'USD', amount: '100', direction: 'credit' },
    ]),
    aliases: [{ source: 'ledger', name: 'treasury:USD', account: 'did:ledger:acct:treasury-USD' }],
    archived: [],
  };
  const file = join(newDir(), 'genesis.json');
  writeFileSync(file, JSON.stringify(genesis));
  return file;
}

describe('progress of ledgerd init, restore, migrate and check', () => {
  it('ends each with one summary line on stderr when stderr is not a terminal, the results on stdout as before', async () => {
    const dir = newDir();
    const init = await ledgerdRun(['init', '--data-dir', dir, '--genesis', genesisFile(300)]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stderr).toMatch(onlySummary('ledgerd init', 'written'));
    expect(init.stdout).toMatch(/^ledgerd: book created in /);
    // Every record the new book holds, each written once, and each identity that owns an account (300 customers and the operator) once more: made by its section, then completed by the accounts section.
    expect(countOf(init.stderr, 'ledgerd init')).toBe((await bookRecords(dir)).records + 301);

    const check = await ledgerdRun(['check', '--data-dir', dir]);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stderr).toMatch(onlySummary('ledgerd check', 'read'));
    expect(check.stdout).toMatch(/301 accounts, 301 balances, 600 journal entries, .*: consistent\n$/);
    // At least every account record and every journal entry (each read through its account's index), and not the book twice over.
    expect(countOf(check.stderr, 'ledgerd check')).toBeGreaterThanOrEqual(301 + 600);
    expect(countOf(check.stderr, 'ledgerd check')).toBeLessThan(2 * (await bookRecords(dir)).records);

    // A stage-1 backup: restored as it was (layout 1), then migrated, then checked.
    const old = newDir();
    const restored = await ledgerdRun(['restore', '--from', stageOneBackup, '--data-dir', old, '--accept-unverified']);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toMatch(summary('ledgerd restore', 'restored'));
    // The backup's entries, as the result says.
    expect(countOf(restored.stderr, 'ledgerd restore')).toBe(Number(/: (\d+) entries, journal position/.exec(restored.stdout)?.[1]));
    const migrated = await ledgerdRun(['migrate', '--data-dir', old]);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stderr).toMatch(onlySummary('ledgerd migrate', 'read'));
    // Every entry of the old book, then its account index again (the verification: one index entry per journal entry).
    const [entriesRead, journalEntries] = /: (\d+) entries read, (\d+) journal entries/.exec(migrated.stdout)!.slice(1).map(Number) as [number, number];
    expect(countOf(migrated.stderr, 'ledgerd migrate')).toBeGreaterThanOrEqual(entriesRead + journalEntries);
    expect(countOf(migrated.stderr, 'ledgerd migrate')).toBeLessThan(entriesRead + journalEntries + 10);
    // Nothing to do: nothing counted, no summary.
    const again = await ledgerdRun(['migrate', '--data-dir', old]);
    expect(again.stderr).toBe('');
    expect(again.stdout).toMatch(/nothing to do/);

    // A layout-3 book moves its account index in place, then its operations into their event chunks: counted too,
    // each moved index entry and event chunk read once, each operation at most four times (its record, its chunks, verified).
    const inPlace = newDir();
    await layFixtureBook(fixtureBook('layout-3'), inPlace);
    const moved = await ledgerdRun(['migrate', '--data-dir', inPlace]);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stderr).toMatch(onlySummary('ledgerd migrate', 'read'));
    const rewritten = Number(/(\d+) account index entries made compact/.exec(moved.stdout)?.[1]);
    const [chunks, pointers, whole] = /(\d+) event chunks rewritten, (\d+) operations stored once \((\d+) kept whole/.exec(moved.stdout)!.slice(1).map(Number) as [number, number, number];
    expect(rewritten).toBeGreaterThan(0);
    expect(chunks).toBeGreaterThan(0);
    expect(countOf(moved.stderr, 'ledgerd migrate')).toBeGreaterThanOrEqual(rewritten + chunks + pointers + whole);
    expect(countOf(moved.stderr, 'ledgerd migrate')).toBeLessThan(rewritten + chunks + 4 * (pointers + whole) + 10);
  });

  it('on a terminal draws one line in place, with the rate and the time left, and erases it before the result, leaving no line behind', async () => {
    // Large enough to take a few redraws on a quiet machine.
    const dir = newDir();
    const init = await timedOnTerminal('bin/ledgerd', ['init', '--data-dir', dir, '--genesis', genesisFile(3000)]);
    expect(init.code, init.screen).toBe(0);
    expect(init.screen).toMatch(drawn('ledgerd init', 'written'));
    // The first pass counted the file's entries: the share taken, and the time left.
    expect(init.screen).toMatch(timeLeft('ledgerd init', 'written'));
    // Erased, then the result from the line's start; no summary on a terminal.
    endsClean(init.screen, 'ledgerd: book created in ', init.ms);
    expect(init.screen).not.toMatch(/entries written in/);
    // Every drawing stays on its one line: no line break before the result.
    expect(init.screen.slice(0, init.screen.indexOf('ledgerd: book created'))).not.toContain('\n');

    // The head counts the journal: the time left is told from the entries folded.
    const check = await timedOnTerminal('bin/ledgerd', ['check', '--data-dir', dir]);
    expect(check.code, check.screen).toBe(0);
    expect(check.screen).toMatch(timeLeft('ledgerd check', 'read'));
    endsClean(check.screen, 'ledgerd check: ', check.ms);
    expect(check.screen).toMatch(/\r\x1b\[Kledgerd check: [^\r\n]*: consistent\r\n$/);

    // A migration counts the old book's entries first.
    const old = await layout1Book(20_000);
    const migrated = await timedOnTerminal('bin/ledgerd', ['migrate', '--data-dir', old]);
    expect(migrated.code, migrated.screen).toBe(0);
    expect(migrated.screen).toMatch(timeLeft('ledgerd migrate', 'read'));
    endsClean(migrated.screen, 'ledgerd migrate: ', migrated.ms);
    expect(migrated.screen).toMatch(/\r\x1b\[Kledgerd migrate: [^\r\n]*: book migrated from store layout 1 to \d and verified/);

    // A restore knows how much of its file is read: the share done and the time left.
    const restored = await timedOnTerminal('bin/ledgerd', ['restore', '--from', stageOneBackup, '--data-dir', newDir(), '--accept-unverified']);
    expect(restored.code, restored.screen).toBe(0);
    expect(restored.screen).toMatch(timeLeft('ledgerd restore', 'restored'));
    endsClean(restored.screen, 'ledgerd: book restored in ', restored.ms);
  });
});

describe('ledgerctl ops backup', () => {
  const shared = useDaemon({ alice: 1_000n }, { backup: { allowPlaintext: true } });
  const env = () => ({ LEDGER_URL: shared.daemon.url, LEDGER_TOKEN: shared.keys.operator, LEDGERCTL_CONFIG_DIR: configDir() });

  it('prints its size for people, and refuses to replace a file without --force (exit 2, the file untouched)', async () => {
    const out = join(newDir(), 'book.backup');
    const first = await onTerminal('bin/ledgerctl', ['ops', 'backup', '--out', out], env());
    expect(first.code, first.screen).toBe(0);
    const bytes = readFileSync(out).length;
    expect(first.screen).toMatch(new RegExp(`backup written to ${out}: [\\d,]+ entries, \\d+\\.\\d KiB \\(${bytes.toLocaleString('en-US')} bytes\\), sha256 [0-9a-f]{64}`));

    writeFileSync(out, 'mine\n');
    const refused = await ledgerctl(['ops', 'backup', '--out', out], env());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${out} exists: give --force to replace it, or another --out`);
    expect(readFileSync(out, 'utf8')).toBe('mine\n');
    expect(existsSync(`${out}.partial`)).toBe(false);

    const forced = await ledgerctl(['ops', 'backup', '--out', out, '--force', '--json'], env());
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.json().bytes).toBe(readFileSync(out).length);
    expect(readFileSync(out, 'utf8')).toMatch(/^\{"format":"ledgerd-backup"/);
  });
});
