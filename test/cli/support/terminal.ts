/**
 * Running the built `ledgerctl` (or `ledgerd`) on a real terminal (a pty made by util-linux
 * `script`), as an operator does: stdout and stderr both reach the terminal, so what it shows is one text.
 */
import { spawn } from 'node:child_process';
import { repoRoot } from './daemon.js';

const runTimeoutMs = 30_000;

const quoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

export interface TerminalRun {
  code: number | null;
  /** Everything the terminal received, line ends as the pty wrote them (`\r\n`). */
  screen: string;
}

/** `typed`: what the operator types on the terminal (sent once it asks). */
export function ledgerctlOnTerminal(args: readonly string[], env: Record<string, string | undefined> = {}, typed?: string): Promise<TerminalRun> {
  return onTerminal('bin/ledgerctl', args, env, typed);
}

/** `bin` (`bin/ledgerctl` or `bin/ledgerd`) with `args` on a pty 160 columns wide; `typed` as above. */
export function onTerminal(bin: string, args: readonly string[], env: Record<string, string | undefined> = {}, typed?: string): Promise<TerminalRun> {
  // A pty of some width, as a terminal window has; `exec` so the exit code is the program's.
  const line = `stty cols 160 rows 50; exec ${quoted(process.execPath)} ${bin} ${args.map(quoted).join(' ')}`;
  const child = spawn('script', ['-q', '-e', '-c', line, '/dev/null'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.on('data', (c: Buffer) => {
    screen += c.toString();
    if (typed !== undefined && screen.includes("[y/N]")) {
      child.stdin.end(typed);
      typed = undefined;
    }
  });
  child.stderr.on('data', (c: Buffer) => (screen += c.toString()));
  if (typed === undefined) child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), runTimeoutMs);
  return new Promise((done) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, screen });
    }),
  );
}
