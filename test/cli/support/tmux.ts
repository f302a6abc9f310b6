/** Driving a program in tmux on a private server socket: send keys, read the screen with a bounded wait. */
import { execFileSync } from 'node:child_process';

const pollMs = 200;

export class Tmux {
  private readonly socket = `ledgerctl-test-${process.pid}-${Date.now()}`;
  private readonly session = 'main';

  constructor(readonly columns = 200, readonly rows = 50) {}

  private tmux(args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  /** Starts `command` (a shell line) in a new detached session of the given size. */
  start(command: string): void {
    this.tmux(['new-session', '-d', '-s', this.session, '-x', String(this.columns), '-y', String(this.rows), command]);
  }

  sendKeys(...keys: string[]): void {
    this.tmux(['send-keys', '-t', this.session, ...keys]);
  }

  screen(): string {
    return this.tmux(['capture-pane', '-p', '-t', this.session]);
  }

  /** Polls the screen until `test` holds; fails with the last screen after `timeoutMs`. */
  async waitFor(test: (screen: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      last = this.screen();
      if (test(last)) return last;
      await new Promise((r) => setTimeout(r, pollMs));
    }
    throw new Error(`tmux: no ${what} within ${timeoutMs} ms; the screen was:\n${last}`);
  }

  kill(): void {
    try {
      this.tmux(['kill-server']);
    } catch {
      // Already gone.
    }
  }
}
