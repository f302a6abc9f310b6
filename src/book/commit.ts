/**
 * Committing a built round: one atomic write, and only once it is durable do the
 * kernel's state (state.ts), the waiting direct decisions and the listeners follow.
 */
import type { DirectCommand } from '../decide/decide-auth.js';
import type { Refusal } from '../errors.js';
import type { DecisionEvents } from './events.js';
import type { StoreHealth } from './recovery.js';
import type { BuiltRound } from './round-builder.js';
import type { BookState } from './state.js';

/** A direct decision waiting for its round. */
export interface DirectRequest {
  readonly command: DirectCommand;
  resolve(outcome: Refusal | null): void;
  reject(error: unknown): void;
}

export interface CommitHost {
  readonly health: StoreHealth;
  readonly state: BookState;
  readonly events: DecisionEvents;
}

/** Writes a built round; once it is durable, the state, the direct decisions and listeners follow. False when the write failed. */
export async function commitRound(host: CommitHost, expiries: { refreshNextExpiry(): Promise<void> }, round: BuiltRound, direct: readonly DirectRequest[]): Promise<boolean> {
  if (!(await host.health.writeOrNote(round.writes))) return false;
  for (const [i, d] of direct.entries()) d.resolve(round.directOutcomes[i]!);
  // Committed: the cache and the in-memory head now follow the store.
  host.state.follow(round);
  if (round.expiring.length > 0 || round.events.some((op) => op.command.type === 'reserve')) await expiries.refreshNextExpiry();
  host.events.emitRound(round.eventStart, round.events);
  return true;
}
