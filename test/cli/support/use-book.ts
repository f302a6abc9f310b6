/** One real `ledgerd` on the test book for a test file, and the environment that reaches it as the operator. */
import { afterAll, beforeAll } from 'vitest';
import { testGenesis } from './book.js';
import { type Daemon, startDaemon } from './daemon.js';
import { configDir } from './ledgerctl.js';

export interface Book {
  readonly daemon: Daemon;
  /** `LEDGER_URL` and `LEDGER_TOKEN` of the operator, and a profile directory of the file's own. */
  readonly env: Record<string, string>;
}

/** Started before the file's tests (register further setup after this call), stopped after them. */
export function useBook(): Book {
  const book = {} as { daemon: Daemon; env: Record<string, string> };
  beforeAll(async () => {
    book.daemon = await startDaemon({ genesis: testGenesis });
    book.env = { LEDGER_URL: book.daemon.url, LEDGER_TOKEN: book.daemon.operatorKey, LEDGERCTL_CONFIG_DIR: configDir() };
  });
  afterAll(() => book.daemon?.stop());
  return book;
}
