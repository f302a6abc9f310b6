/**
 * ledgerd as a systemd service, black-box (issue 25 item 11): readiness and stopping sent
 * to $NOTIFY_SOCKET (a unix datagram socket a python3 helper binds here, standing in for
 * PID 1); SIGHUP reads the config again and applies a changed log level; log lines in JSON
 * (no plain line among them, a failure to start included), as text with `--log-format
 * text`, and with their syslog priority first when stderr is the journal's stream;
 * `ledgerd config check` and `config show`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { client, decided, ledgerd, ledgerdRun, startDaemon, useTempDirs, writeBook } from './support.js';

const newDir = useTempDirs();
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A unix datagram socket at `path` (PID 1's notify socket): every datagram it receives, one per entry, newlines kept. */
async function notifySocket(path: string): Promise<string[]> {
  const script = [
    'import socket, sys',
    's = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)',
    `s.bind(${JSON.stringify(path)})`,
    'print("bound", flush=True)',
    // recv() takes no ancillary data: a BARRIER=1 message's fd is closed, which is PID 1's answer to it.
    'while True: print(repr(s.recv(4096).decode()), flush=True)',
  ].join('\n');
  const child = spawn('python3', ['-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const messages: string[] = [];
  await new Promise<void>((resolve) =>
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'bound') resolve();
      // Python's repr of a str: single-quoted, with \n for newlines.
      else messages.push(line.slice(1, -1).replaceAll('\\n', '\n'));
    }),
  );
  return messages;
}

async function until<T>(what: string, read: () => T | undefined): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`never came: ${what}`);
}

const jsonLines = (lines: readonly string[]) => lines.map((line) => JSON.parse(line) as Record<string, any>);

describe('systemd readiness (Type=notify)', () => {
  it('sends READY=1 once it listens and STOPPING=1 as it stops, to $NOTIFY_SOCKET', async () => {
    const dir = newDir();
    await writeBook(dir, { alice: 10n });
    const socket = join(dir, 'notify.sock');
    const messages = await notifySocket(socket);
    const daemon = await startDaemon({ dataDir: dir, env: { NOTIFY_SOCKET: socket } });
    const ready = await until('READY=1', () => messages.find((m) => m.split('\n').includes('READY=1')));
    expect(ready.split('\n')).toContain(`STATUS=serving on ${daemon.url}`);
    expect(messages.some((m) => m.includes('STOPPING=1'))).toBe(false);
    expect(await daemon.stop(), daemon.lastLines()).toBe(0);
    expect(messages.some((m) => m.split('\n').includes('STOPPING=1'))).toBe(true);
    // Nothing went wrong on the way: no warning that systemd-notify failed.
    expect(jsonLines(daemon.stderr).filter((l) => l.level >= 40)).toEqual([]);
  });
});

describe('systemd readiness without systemd', () => {
  it('sends nothing without $NOTIFY_SOCKET; a notify that fails is a warning, and the daemon serves on', async () => {
    const dir = newDir();
    await writeBook(dir, {});
    // No systemd-notify on this PATH: had it been run, it would have failed and said so.
    const empty = newDir();
    const quiet = await startDaemon({ dataDir: dir, env: { PATH: empty, NOTIFY_SOCKET: undefined } });
    expect(await quiet.stop(), quiet.lastLines()).toBe(0);
    expect(jsonLines(quiet.stderr).filter((l) => l.level >= 40)).toEqual([]);
    const failing = await startDaemon({ dataDir: dir, env: { PATH: empty, NOTIFY_SOCKET: join(dir, 'absent.sock') } });
    const warned = await until('the warning', () => jsonLines(failing.stderr).find((l) => l.level === 40 && String(l.msg).startsWith('systemd-notify READY=1')));
    expect(warned.msg).toMatch(/failed: .*ENOENT/);
    expect((await fetch(`${failing.url}/v1/health`)).status).toBe(200);
    expect(await failing.stop(), failing.lastLines()).toBe(0);
  });
});

describe('SIGHUP', () => {
  it('reads the config again: a changed logLevel applies at once, other changes wait for a restart, a bad file is refused', async () => {
    const dir = newDir();
    const keys = await writeBook(dir, { alice: 100n, bob: 0n });
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ logLevel: 'info' }));
    // The harness sets LEDGERD_LOG_LEVEL, which outranks the file: unset here.
    const daemon = await startDaemon({ dataDir: dir, env: { LEDGERD_LOG_LEVEL: undefined } });
    const alice = client(() => daemon.url, keys.customers.alice!);
    // Each its own amount: the same body again would be a replay (its client key is derived from it).
    const transfer = async (amount: string) => (await decided(alice, (await alice.post('/v1/transfers', { legs: [{ from: 'did:ledger:acct:alice', to: 'did:ledger:acct:bob', asset: 'USD', amount }] })).body.operation_reference)).body;
    const first = await transfer('1');
    const decisions = () => jsonLines(daemon.stderr).filter((l) => l.msg === 'decision');
    expect(decisions()).toEqual([]);

    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ logLevel: 'debug', requestTimeoutMs: 20_000 }));
    daemon.process.kill('SIGHUP');
    const reloaded = await until('the reload line', () => jsonLines(daemon.stderr).find((l) => l.msg === 'SIGHUP: configuration read again'));
    expect(reloaded).toMatchObject({ level: 30, logLevel: 'debug', restartNeededFor: ['requestTimeoutMs'] });
    const second = await transfer('2');
    await until('a decision at debug', () => decisions().find((l) => l.operation === second.operation_reference));
    expect(decisions().some((l) => l.operation === first.operation_reference)).toBe(false);

    writeFileSync(join(dir, 'ledgerd.json'), '{"logLevel": "loud"}');
    daemon.process.kill('SIGHUP');
    const refused = await until('the refusal', () => jsonLines(daemon.stderr).find((l) => l.msg === 'SIGHUP: the configuration is not valid; the running one is kept'));
    expect(refused).toMatchObject({ level: 50, reason: 'log level must be one of fatal, error, warn, info, debug, trace, silent' });
    // Still serving, still at debug.
    const third = await transfer('3');
    await until('a decision at debug', () => decisions().find((l) => l.operation === third.operation_reference));
    expect(await daemon.stop(), daemon.lastLines()).toBe(0);
  });
});

describe('the log', () => {
  it('is JSON lines only, from the book made at first start to a failure to listen', async () => {
    const dir = newDir();
    const daemon = await startDaemon({ dataDir: dir });
    const port = new URL(daemon.url).port;
    // A second daemon on the same port fails after its log exists: its last line is a fatal JSON line too.
    const other = newDir();
    const busy = await ledgerdRun(['serve', '--data-dir', other, '--listen', `127.0.0.1:${port}`], { LEDGERD_LOG_LEVEL: 'info' });
    expect(await daemon.stop(), daemon.lastLines()).toBe(0);
    const lines = jsonLines(daemon.stderr);
    expect(lines[0]!.msg).toMatch(/^created a book with the embedded defaults in /);
    expect(busy.code).toBe(5);
    const busyLines = jsonLines(busy.stderr.trimEnd().split('\n'));
    expect(busyLines.at(-1)).toMatchObject({ level: 60, exitCode: 5 });
    expect(busyLines.at(-1)!.msg).toContain(`127.0.0.1:${port}`);
  });

  it('is text for people with --log-format text, control characters escaped', async () => {
    const dir = newDir();
    await writeBook(dir, {});
    const daemon = await startDaemon({ dataDir: dir, args: ['--log-format', 'text'], env: { LEDGERD_LOG_LEVEL: 'info' } });
    await fetch(`${daemon.url}/v1/no-such%1B%5B2J-route`);
    const line = await until('the request line', () => daemon.stderr.find((l) => l.includes(' INFO request ') && l.includes('no-such')));
    expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO request reqId=\S+ method=GET url=\/v1\/no-such%1B%5B2J-route status=400 error=ERR-MalformedCommand principal=null ms=\d+ finished=true$/);
    expect(await daemon.stop(), daemon.lastLines()).toBe(0);
    expect(daemon.stderr.join('\n')).not.toContain('\u001b');
    expect(daemon.stderr.some((l) => l.startsWith('{'))).toBe(false);
  });

  it('starts each line with its syslog priority when stderr is the journal stream ($JOURNAL_STREAM names it)', async () => {
    const dir = newDir();
    await writeBook(dir, {});
    const logPath = join(dir, 'journal.log');
    const fd = openSync(logPath, 'w');
    const stat = fstatSync(fd);
    const child = spawn(process.execPath, [ledgerd, 'serve', '--data-dir', dir, '--listen', '127.0.0.1:0'], {
      env: { ...process.env, LEDGERD_LOG_LEVEL: 'info', JOURNAL_STREAM: `${stat.dev}:${stat.ino}` },
      stdio: ['ignore', 'pipe', fd],
    });
    children.push(child);
    closeSync(fd);
    const url = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).on('line', (line) => resolve(line.replace('ledgerd listening on ', ''))));
    await fetch(`${url}/v1/health`);
    child.kill('SIGTERM');
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0);
    const lines = readFileSync(logPath, 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line).toMatch(/^<[2-7]>\{/);
    expect(lines.find((l) => l.includes('"msg":"stopped"'))).toMatch(/^<6>\{"level":30,/);
  });
});

describe('ledgerd config', () => {
  it('check: exit 0 on a valid config, 3 naming the fault on a bad one', async () => {
    const dir = newDir();
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ logLevel: 'warn', settlement: { blockIntervalMs: 0 } }));
    const good = await ledgerdRun(['config', 'check', '--data-dir', dir]);
    expect(good).toMatchObject({ code: 0, stdout: `ledgerd config check: ${join(dir, 'ledgerd.json')}: valid\n` });
    for (const [doc, reason] of [
      ['{"logLevel": "warn",}', 'is not JSON'],
      ['{"requestTimeoutMs": 5}', 'requestTimeoutMs must be an integer in 1000..600000'],
      ['{"colour": "blue"}', 'unknown setting colour'],
    ] as const) {
      writeFileSync(join(dir, 'ledgerd.json'), doc);
      const bad = await ledgerdRun(['config', 'check', '--data-dir', dir]);
      expect(bad.code, doc).toBe(3);
      expect(bad.stderr).toContain(reason);
      expect(bad.stdout).toBe('');
    }
    expect((await ledgerdRun(['config', 'check', '--config', join(dir, 'absent.json')])).code).toBe(3);
  });

  it('show: the effective config with defaults, the store URL\'s password redacted (from the file or $LEDGERD_STORE_URL)', async () => {
    const dir = newDir();
    writeFileSync(join(dir, 'ledgerd.json'), JSON.stringify({ logLevel: 'warn', store: { kind: 'postgres', url: 'postgres://ledger:hunter2@db.example/ledger?sslmode=require&password=hunter3' } }));
    const shown = await ledgerdRun(['config', 'show', '--data-dir', dir]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toMatch(/hunter/);
    const config = JSON.parse(shown.stdout);
    expect(config).toMatchObject({ logLevel: 'warn', listen: '127.0.0.1:8470', shutdownTimeoutMs: 30_000, dataDir: dir });
    expect(config.store).toMatchObject({ kind: 'postgres', url: 'postgres://ledger:REDACTED@db.example/ledger?sslmode=require&password=REDACTED', poolSize: 8 });
    const fromEnv = await ledgerdRun(['config', 'show', '--data-dir', dir], { LEDGERD_STORE_URL: 'postgresql://root:s3cr%40t@10.0.0.1:5432/book' });
    expect(fromEnv.stdout).not.toContain('s3cr');
    expect(JSON.parse(fromEnv.stdout).store.url).toBe('postgresql://root:REDACTED@10.0.0.1:5432/book');
  });
});
