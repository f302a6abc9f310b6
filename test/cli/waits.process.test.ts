/**
 * Exit codes and waits a script can trust (CONTRACT 11), with the built `ledgerctl` against a real
 * `ledgerd`: submitting commands wait for the decision and exit 1 when it is refused, `--no-wait`
 * prints the acknowledgement, each invocation has its own client key (shown on stderr) that makes
 * running it again safe, and a missing or rejected token exits 4.
 */
import { describe, expect, it } from 'vitest';
import { accounts } from './support/book.js';
import { ledgerctl } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();


const pay = (amount: string, ...extra: string[]) => ledgerctl(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', amount, '--asset', 'USD', ...extra], book.env);
const shownKey = (stderr: string) => /^client key ([0-9a-f]{32})$/m.exec(stderr)?.[1];

describe('submitting commands', () => {
  it('waits for the decision by default and prints the decided operation under a fresh client key', async () => {
    const first = await pay('2');
    expect(first.code).toBe(0);
    expect(first.json()).toMatchObject({ command: 'transfer', state: 'Completed', terminal: true });
    const key = shownKey(first.stderr);
    expect(key).toBeDefined();
    expect(first.json().client_key).toBe(key);
    // The same command line again is a second payment, not a repeat of the first.
    const second = await pay('2');
    expect(second.code).toBe(0);
    expect(shownKey(second.stderr)).not.toBe(key);
    expect(second.json().operation_reference).not.toBe(first.json().operation_reference);
  });

  it('exits 1 when the decision is a refusal, with the decided operation on stdout', async () => {
    const refused = await pay('999999999');
    expect(refused.code).toBe(1);
    expect(refused.json()).toMatchObject({ state: 'Rejected', error: { error: 'ERR-InsufficientAvailable' } });
    expect(refused.stderr).toMatch(/^ERR-InsufficientAvailable: /m);
  });

  it('exits 1 for a transfer that expired before its decision', async () => {
    const expired = await pay('1', '--deadline', '1');
    expect(expired.code).toBe(1);
    expect(expired.json()).toMatchObject({ state: 'Expired' });
    expect(expired.stderr).toMatch(/expired: its deadline passed before a decision, nothing moved/);
  });

  it('prints the acknowledgement with --no-wait; --wait is still accepted', async () => {
    const ack = await pay('999999999', '--no-wait');
    expect(ack.code).toBe(0);
    expect(ack.json()).toMatchObject({ client_key: shownKey(ack.stderr), client_key_derived: false, operation_reference: expect.any(String) });
    expect(ack.json()).not.toHaveProperty('command');
    const waited = await pay('1', '--wait');
    expect(waited.code).toBe(0);
    expect(waited.json().state).toBe('Completed');
  });

  it('running it again with the shown client key is a repeat, not a second effect', async () => {
    const first = await pay('3');
    const key = shownKey(first.stderr)!;
    const again = await pay('3', '--client-key', key);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(`ledgerctl: replay: client key ${key} was taken before; this is ${first.json().operation_reference}'s reply, nothing was done again\n`);
    expect(again.json().operation_reference).toBe(first.json().operation_reference);
  });

  it('shows a spinner on a terminal while it waits, then the decision', async () => {
    const shown = await ledgerctlOnTerminal(['reservations', 'create', '--payer', accounts.alice, '--amount', '3', '--asset', 'USD'], book.env);
    expect(shown.code).toBe(0);
    expect(shown.screen).toMatch(/waiting for op_\w+/);
    expect(shown.screen).toMatch(/state\s+Reserved/);
  });
});

describe('tokens', () => {
  it('exits 4 for a missing or rejected token, 1 for a refusal of the signed-in caller', async () => {
    const missing = await ledgerctl(['trial-balance'], { ...book.env, LEDGER_TOKEN: '' });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/^ERR-CredentialInvalid: /);
    const wrong = await ledgerctl(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '1', '--asset', 'USD'], { ...book.env, LEDGER_TOKEN: 'not-a-key' });
    expect(wrong.code).toBe(4);
    const notOperator = await ledgerctl(['trial-balance'], { ...book.env, LEDGER_TOKEN: book.daemon.identitiesKey });
    expect(notOperator.code).toBe(1);
  });
});

describe('a service that cannot be reached', () => {
  it('says that running the command again with the shown key is safe, and it is', async () => {
    let down: Awaited<ReturnType<typeof pay>> | undefined;
    await book.daemon.restart(async () => {
      down = await pay('4');
    });
    expect(down!.code).toBe(3);
    const key = shownKey(down!.stderr)!;
    expect(down!.stderr).toContain(`cannot reach ${book.daemon.url}`);
    expect(down!.stderr).toContain(`(after 3 attempts); whether it was received is unknown: running it again with --client-key ${key} is safe`);
    const again = await pay('4', '--client-key', key);
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({ client_key: key, state: 'Completed' });
  });
});
