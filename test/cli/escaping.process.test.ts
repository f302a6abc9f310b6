/**
 * Customers' strings never drive the operator's terminal (issue 9 item 18): a reference holding
 * escape sequences (screen clear, title change, colour, a bidi override) is shown escaped by the
 * built `ledgerctl` on a real terminal, against a real `ledgerd`, and passes unchanged to programs.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { accounts } from './support/book.js';
import { ledgerctl } from './support/ledgerctl.js';
import { ledgerctlOnTerminal } from './support/terminal.js';
import { useBook } from './support/use-book.js';

const book = useBook();
let operation: string;

/** Clear the screen, set the window title, turn text red, reverse what follows; a C1 CSI and DEL too. */
const hostile = '\u001b[2J\u001b]0;pwned\u0007\u001b[31mred\u202eevil\u009b1m\u007f';
const shownEscaped = '\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31mred\\u202eevil\\x9b1m\\x7f';

beforeAll(async () => {
  const sent = await ledgerctl(['transfers', 'create', '--from', accounts.alice, '--to', accounts.bob, '--amount', '5', '--asset', 'USD', '--reference', JSON.stringify(hostile), '--field', 'operation_reference'], book.env);
  expect(sent.code).toBe(0);
  operation = sent.stdout.trim();
});

/** Any of the hostile sequences reaching the terminal raw. */
const raw = /\u001b\[2J|\u001b\]0;|\u001b\[31m|\u202e|\u009b|\u007f/;

describe('served strings on a terminal', () => {
  it('shows a reference with escape sequences escaped, in details and in tables', async () => {
    const shown = await ledgerctlOnTerminal(['operations', 'show', operation], book.env);
    expect(shown.code).toBe(0);
    expect(shown.screen).not.toMatch(raw);
    expect(shown.screen).toContain(shownEscaped);
    const tail = await ledgerctlOnTerminal(['events', 'tail', '--after', '0', '--count', '1'], book.env);
    expect(tail.code).toBe(0);
    expect(tail.screen).toContain(operation);
    const movements = await ledgerctlOnTerminal(['movements', '--account', accounts.bob, '--limit', '5'], book.env);
    expect(movements.code).toBe(0);
    expect(movements.screen).not.toMatch(raw);
    const field = await ledgerctlOnTerminal(['operations', 'show', operation, '--field', 'reference'], book.env);
    expect(field.screen).not.toMatch(raw);
    expect(field.screen).toContain(shownEscaped);
  });

  it('escapes what reaches stderr too', async () => {
    const usage = await ledgerctlOnTerminal(['operations', 'show', `${operation}\u001b[2J`, '--bogus\u001b]0;x\u0007'], book.env);
    expect(usage.code).toBe(2);
    expect(usage.screen).not.toMatch(/\u001b\[2J|\u001b\]0;/);
    expect(usage.screen).toContain('--bogus\\x1b]0;x\\x07');
  });

  it('gives programs the value unchanged (--json, --field through a pipe)', async () => {
    const json = await ledgerctl(['operations', 'show', operation, '--json'], book.env);
    expect(json.json().reference).toBe(hostile);
    const field = await ledgerctl(['operations', 'show', operation, '--field', 'reference'], book.env);
    expect(field.stdout).toBe(`${hostile}\n`);
  });
});
