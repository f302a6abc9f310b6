/**
 * Decisions over identities, credentials, challenges and sessions. Like decide.ts,
 * pure and synchronous over prefetched reads: the ceremonies' signatures were
 * verified at the edge, while everything that is state is decided here, in order, by
 * the one decider: a challenge is taken once, a sign counter only moves forward, a
 * credential joins the set it was meant for.
 */
import { type ChallengePurpose, challengeKey, challengeExpiryKey, consumeChallenge, openChallenge } from '../auth/challenges.js';
import { type Actor, type Principals, inScope } from '../auth/authority.js';
import { type Credential, type TokenGrant, decodeCredential } from '../auth/credentials.js';
import { type Refusal, refusal } from '../errors.js';
import type { Command, Identity, NewCredential, OperationApproval, OperationResult } from '../model/model.js';
import type { AccountId, CredentialId, IdentityId } from '../model/values.js';
import { credentialKey, expiryKey, memberKey, memberPrefix, tokenKey } from '../model/keys.js';
import { type MemberReads, decideNewMember, memberOf } from '../auth/members.js';

/** Records read and written by key, as stored text (the overlay holds them for a round). */
export interface RecordReads {
  record(key: string): string | undefined;
  identity(id: string): Identity | undefined;
}

export interface RecordWrite {
  readonly key: string;
  readonly value: string | null;
}

export interface AuthEffects {
  readonly records: readonly RecordWrite[];
  readonly newIdentity: Identity | null;
  readonly result: OperationResult;
}

/** Decisions the decider takes at once for a waiting caller: not acknowledged commands. */
export type DirectCommand =
  | {
      readonly type: 'sign_in';
      readonly credential: CredentialId;
      readonly challenge: string;
      readonly counter: number;
      readonly session: TokenGrant;
    }
  /**
   * A member's act decided outside the rounds (a backup taken, a checkpoint or disclosure made):
   * its audit item (CONTRACT 13), written in one batch with `writes` (the act's stored reply).
   */
  | {
      readonly type: 'record_act';
      readonly credential: CredentialId;
      readonly act: string;
      readonly operation: string | null;
      readonly justification: string | null;
      readonly writes: readonly { readonly key: string; readonly value: string }[];
      /** Taken by an approved proposal (CONTRACT 13): approved in the same batch, or refused with it. */
      readonly approval?: OperationApproval;
      /** A covered act taken directly as no other member could approve it. */
      readonly unapproved?: boolean;
    };

/** What taking a challenge needs beyond the store: the key challenges are MAC'd under, and whether the used-set is at its bound. */
export interface ChallengeGate {
  /** Null: the kernel was given no key, so no challenge verifies. */
  readonly macKey: Uint8Array | null;
  readonly usedSetFull: boolean;
}

const invalid = (why: string) => refusal('ERR-CredentialInvalid', why);

/** The records most commands read: none (one shared list; recordNeeds runs for every command). */
const noRecords: readonly string[] = Object.freeze([]);

/** The keys a command's decision reads beyond accounts and balances. */
export function recordNeeds(command: Command | DirectCommand): readonly string[] {
  switch (command.type) {
    case 'create_identity':
    case 'register_credential':
      return command.credential.challenge === null ? [] : [challengeKey(command.credential.challenge)];
    case 'sign_in':
      return [challengeKey(command.challenge), credentialKey(command.credential), memberKey(command.credential)];
    case 'record_act':
      return [memberKey(command.credential)];
    case 'reclaim':
      return command.proof.scheme === 'key' ? [credentialKey(command.credential)] : [credentialKey(command.credential), challengeKey(command.proof.challenge)];
    default:
      return noRecords;
  }
}

/** Takes a challenge for one ceremony: its used-set record and expiry index entry, or why not. */
export function takeChallenge(reads: RecordReads, gate: ChallengeGate, challenge: string, purpose: ChallengePurpose, identity: IdentityId | null, atMs: number): RecordWrite[] | Refusal {
  const opened = gate.macKey === null ? invalid('the challenge is unknown') : openChallenge(gate.macKey, challenge, identity);
  if ('error' in opened) return opened;
  const taken = consumeChallenge({ ...opened, used: reads.record(challengeKey(challenge)) !== undefined }, { purpose, identity, nowMs: atMs });
  if ('error' in taken) return taken;
  if (gate.usedSetFull) return refusal('ERR-DecisionUnavailable', 'too many challenges were used lately; retry shortly');
  return [
    { key: challengeKey(challenge), value: JSON.stringify(taken) },
    { key: challengeExpiryKey(challenge, taken.expiresAtMs), value: '' },
  ];
}

/** The writes registering `credential` as `id` in `identity`'s set, its challenge taken. */
function registration(
  reads: RecordReads,
  credential: NewCredential,
  id: CredentialId,
  identity: IdentityId,
  scope: readonly AccountId[] | null,
  challengeIdentity: IdentityId | null,
  input: { atMs: number; challenges: ChallengeGate },
): RecordWrite[] | Refusal {
  const { atMs } = input;
  const writes: RecordWrite[] = [];
  if (credential.scheme === 'webauthn-es256') {
    if (credential.challenge === null) return invalid('a passkey registration names its register challenge');
    const taken = takeChallenge(reads, input.challenges, credential.challenge, 'register', challengeIdentity, atMs);
    if ('error' in taken) return taken;
    writes.push(...taken);
  }
  const record: Credential = {
    id,
    identity,
    scheme: credential.scheme,
    verifier: credential.verifier,
    scope,
    createdAtMs: atMs,
    webauthnId: credential.webauthnId,
    counter: credential.counter,
  };
  writes.push({ key: credentialKey(id), value: JSON.stringify(record) });
  if (credential.scheme === 'api-key') {
    if (credential.tokenHash === null) return invalid('an api-key registration carries its key hash');
    const grant: TokenGrant = { credential: id, principal: identity, scheme: 'api-key', expiresAtMs: null, scope, hash: credential.tokenHash };
    writes.push({ key: tokenKey(credential.tokenHash), value: JSON.stringify(grant) });
  }
  return writes;
}

/** POST /v1/identities: a new identity and its first credential, by the identities principal. */
export function decideCreateIdentity(
  command: Extract<Command, { type: 'create_identity' }>,
  actor: Actor,
  reads: RecordReads,
  input: { atMs: number; principals: Principals; newIdentityId: IdentityId; newCredentialId: CredentialId; challenges: ChallengeGate },
): AuthEffects | Refusal {
  if (actor.principal !== input.principals.identities) return refusal('ERR-NotAuthorised', 'the initiating principal holds no authority that covers creating identities');
  if (reads.identity(input.newIdentityId) !== undefined) return refusal('ERR-Internal', 'drawn identity id is taken');
  // The identity does not exist before this command, so its challenge cannot be bound to it.
  const writes = registration(reads, command.credential, input.newCredentialId, input.newIdentityId, null, null, input);
  if ('error' in writes) return writes;
  return {
    records: writes,
    newIdentity: { id: input.newIdentityId, createdAtMs: input.atMs, accounts: [] },
    result: { identity: input.newIdentityId, credential: input.newCredentialId },
  };
}

/** POST /v1/credentials: into the caller's own set, or by the identities principal into another's. */
export function decideRegisterCredential(
  command: Extract<Command, { type: 'register_credential' }>,
  actor: Actor,
  reads: RecordReads & MemberReads,
  input: { atMs: number; principals: Principals; newCredentialId: CredentialId; challenges: ChallengeGate },
): AuthEffects | Refusal {
  const target = reads.identity(command.identity);
  const mayRegister = actor.principal === command.identity || (actor.principal === input.principals.identities && actor.onBehalfOf === command.identity);
  if (target === undefined || !mayRegister) {
    return refusal('ERR-NotAuthorised', 'the initiating principal holds no authority that covers registering credentials for that identity');
  }
  // Absent, the scope is the presenting credential's; named, it lies within it and within the identity's accounts.
  const scope = command.scope ?? actor.scope ?? null;
  for (const account of scope ?? []) {
    if (!target.accounts.includes(account) || !inScope(actor, account)) {
      return refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers account ${account}`);
    }
  }
  // Operator credentials are members, named and with a role (CONTRACT 13); no other set has members.
  if ((command.identity === input.principals.operator) !== (command.member !== undefined)) {
    return refusal('ERR-NotAuthorised', 'the initiating principal holds no authority that covers this registration: operator credentials are added as members (POST /v1/ops/members)');
  }
  const writes = registration(reads, command.credential, input.newCredentialId, command.identity, scope, command.identity, input);
  if ('error' in writes) return writes;
  if (command.member !== undefined) {
    const member = decideNewMember(reads, memberPrefix, { ...command.member, credential: input.newCredentialId, scheme: command.credential.scheme, atMs: input.atMs, by: actor.credential });
    if ('error' in member) return member;
    writes.push(member);
  }
  return { records: writes, newIdentity: null, result: { credential: input.newCredentialId } };
}

/** Sign-in with a passkey whose assertion verified at the edge: takes the challenge, moves the counter, opens the session. */
export function decideSignIn(command: Extract<DirectCommand, { type: 'sign_in' }>, reads: RecordReads, atMs: number, challenges: ChallengeGate): RecordWrite[] | Refusal {
  const text = reads.record(credentialKey(command.credential));
  const credential = text === undefined ? undefined : decodeCredential(text);
  if (credential === undefined || credential.scheme !== 'webauthn-es256') return invalid('no passkey credential by that id');
  const member = memberOf(reads, credential.id);
  if (member !== undefined && member.removedAtMs !== null) return invalid('the credential is a removed member of the operator');
  // Decided here too: two sign-ins verified against the same stored counter race to this point.
  if ((credential.counter > 0 || command.counter > 0) && command.counter <= credential.counter) {
    return invalid('the sign counter did not increase (replay or cloned authenticator)');
  }
  const taken = takeChallenge(reads, challenges, command.challenge, 'authenticate', null, atMs);
  if ('error' in taken) return taken;
  const session: TokenGrant = { ...command.session, credential: credential.id, principal: credential.identity, scope: credential.scope };
  return [
    ...taken,
    { key: credentialKey(credential.id), value: JSON.stringify({ ...credential, counter: command.counter }) },
    { key: tokenKey(session.hash), value: JSON.stringify(session) },
    { key: expiryKey('tokx', session.expiresAtMs!, session.hash), value: '' },
  ];
}
