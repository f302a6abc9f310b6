/**
 * Integrating parties (CONTRACT 5): the operator ties one or more principals
 * (identities of the book) to a new party. Pure and synchronous over prefetched
 * reads, like decide-auth.ts; the record is also what the listing shows.
 */
import { integratingPartiesMax } from '../constants.js';
import type { RecordReads, RecordWrite } from './decide-auth.js';
import { type Actor, type Principals } from '../auth/authority.js';
import { type Refusal, refusal } from '../errors.js';
import type { Command } from '../model/model.js';
import type { IdentityId, PartyId } from '../model/values.js';
import { partyKey, partyPrefix } from '../model/keys.js';

export interface Party {
  readonly id: PartyId;
  readonly registeredAtMs: number;
  readonly principals: readonly { readonly principal: IdentityId; readonly tiedAtMs: number }[];
}

export function decideRegisterParty(
  command: Extract<Command, { type: 'register_party' }>,
  actor: Actor,
  reads: RecordReads & { listed(prefix: string): readonly string[] },
  input: { readonly atMs: number; readonly principals: Principals; readonly newPartyId: PartyId },
): { records: RecordWrite[]; party: PartyId } | Refusal {
  if (actor.principal !== input.principals.operator) return refusal('ERR-NotAuthorised', 'the initiating principal holds no authority that covers registering integrating parties (operator only)');
  const unknown = command.principals.find((p) => reads.identity(p) === undefined);
  if (unknown !== undefined) return refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers identity ${unknown}, which the book does not hold`);
  if (reads.listed(partyPrefix).length >= integratingPartiesMax) return refusal('ERR-BoundExceeded', `the book holds ${integratingPartiesMax} integrating parties, the most allowed`);
  const party: Party = { id: input.newPartyId, registeredAtMs: input.atMs, principals: command.principals.map((principal) => ({ principal, tiedAtMs: input.atMs })) };
  return { records: [{ key: partyKey(party.id), value: JSON.stringify(party) }], party: party.id };
}
