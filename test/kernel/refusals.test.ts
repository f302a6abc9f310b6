/**
 * Refusals are answers, not faults: the kernel raises them on hot paths (a submitter
 * turned away at the backlog bound, a command refused at intake), so a `Refused`
 * carries no stack trace, while staying an Error with its code and description.
 */
import { describe, expect, it } from 'vitest';
import { Refused } from '../../src/errors.js';
import { actorOf, customersGenesis, openBook, submission, transfer } from '../support/book.js';

const frames = (error: Error) => (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));

async function rejection(p: Promise<unknown>): Promise<Refused> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof Refused)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

describe('refusals', () => {
  it('carry their code and description and no stack frames', () => {
    const refused = new Refused('ERR-ZeroAmount', 'amount is zero');
    expect(refused).toBeInstanceOf(Error);
    expect(refused.name).toBe('Refused');
    expect(refused.message).toBe('ERR-ZeroAmount: amount is zero');
    expect(refused.refusal).toEqual({ error: 'ERR-ZeroAmount', description: 'amount is zero' });
    expect(frames(refused)).toEqual([]);
    // Errors that are faults keep their stacks.
    expect(frames(new Error('a fault')).length).toBeGreaterThan(0);
  });

  it('are raised by the kernel, at intake and when it turns a submission away, without a stack', async () => {
    const book = await openBook({ genesis: customersGenesis({ alice: 1_000n, bob: 0n }) });
    const alice = actorOf('did:ledger:id:alice');
    const toItself = await rejection(book.kernel.submit(submission(alice, transfer('did:ledger:acct:alice', 'did:ledger:acct:alice', 1n))));
    expect(toItself.refusal.error).toBe('ERR-UnsupportedLeg');
    expect(frames(toItself)).toEqual([]);
    await book.kernel.close();
    const closed = await rejection(book.kernel.submit(submission(alice, transfer('did:ledger:acct:alice', 'did:ledger:acct:bob', 1n))));
    expect(closed.refusal.error).toBe('ERR-DecisionUnavailable');
    expect(frames(closed)).toEqual([]);
  });
});
