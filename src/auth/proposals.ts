/**
 * Proposals (CONTRACT 13): a member's covered act stored for a second member, at
 * `prop/<cseq>` (found by id through `propi/<id>`), each member's open ones counted at
 * `propn/<credential>` (at most `proposalsOpenPerMemberMax`). Decided like every command,
 * pure over prefetched records with the round's time: a proposal past `expiresAtMs` is
 * expired whatever it says, so no timer writes it. Approving is the act itself submitted
 * under `proposal:<id>` (Operation.approval): its decision approves the proposal and then
 * decides the act, in one round's batch, so an approval never stands without its act.
 */
import { proposalsOpenPerMemberMax } from '../constants.js';
import { type Refusal, refusal } from '../errors.js';
import { check, damaged, parsed, recordJson } from '../model/decode.js';
import { approvalPolicyKey, proposalIdKey, proposalKey, proposalsOpenKey } from '../model/keys.js';
import type { Command, Operation, OperationApproval, Role } from '../model/model.js';
import type { CredentialId } from '../model/values.js';
import { type ApprovalPolicy, decodePolicy, defaultPolicy } from './approvals.js';
import { holdsRole, memberOf, roles } from './members.js';

export type ProposalState = 'open' | 'approved' | 'rejected' | 'expired';

export interface Proposal {
  readonly id: string;
  readonly cseq: number;
  /** `{method, path, body, on_behalf_of?}` as canonical JSON text. */
  readonly request: string;
  readonly justification: string;
  readonly acts: readonly string[];
  readonly approverRole: Role;
  readonly proposer: string;
  readonly proposerCredential: CredentialId;
  readonly proposedAtMs: number;
  readonly expiresAtMs: number;
  /** As stored: `expired` is never stored, it is read off the time (stateAt). */
  readonly state: 'open' | 'approved' | 'rejected';
  readonly decidedBy: string | null;
  readonly decidedByCredential: CredentialId | null;
  readonly decidedAtMs: number | null;
  readonly reason: string | null;
  /** The act an approval submitted. */
  readonly operation: string | null;
}

const storedStates = ['open', 'approved', 'rejected'] as const;

export function decodeProposal(text: string): Proposal {
  const what = 'proposal';
  const j = recordJson(text, what);
  check.string(j, 'id', what);
  check.integer(j, 'cseq', what);
  check.string(j, 'request', what);
  check.string(j, 'justification', what);
  check.strings(j, 'acts', what);
  check.oneOf(j, 'approverRole', roles, what);
  check.string(j, 'proposer', what);
  check.string(j, 'proposerCredential', what);
  check.integer(j, 'proposedAtMs', what);
  check.integer(j, 'expiresAtMs', what);
  check.oneOf(j, 'state', storedStates, what);
  for (const name of ['decidedBy', 'decidedByCredential', 'reason', 'operation']) check.nullableString(j, name, what);
  check.nullableInteger(j, 'decidedAtMs', what);
  return j as unknown as Proposal;
}

/** A proposal's state at `nowMs`: an open one past its time is expired. */
export const stateAt = (p: Proposal, nowMs: number): ProposalState => (p.state === 'open' && nowMs >= p.expiresAtMs ? 'expired' : p.state);

interface RecordWrite {
  readonly key: string;
  readonly value: string | null;
}

interface ProposalReads {
  record(key: string): string | undefined;
}

/** One member's open proposals: `{cseq, expiresAtMs}` each. */
interface OpenEntry {
  readonly cseq: number;
  readonly expiresAtMs: number;
}

function openEntries(reads: ProposalReads, credential: string): OpenEntry[] {
  const text = reads.record(proposalsOpenKey(credential));
  if (text === undefined) return [];
  const list = parsed(text, 'open proposals');
  if (!Array.isArray(list)) damaged('open proposals', 'not a list');
  return list.map((e) => ({ cseq: check.integer(e as Record<string, unknown>, 'cseq', 'open proposals'), expiresAtMs: check.integer(e as Record<string, unknown>, 'expiresAtMs', 'open proposals') }));
}

const openWrite = (credential: string, entries: readonly OpenEntry[]): RecordWrite => ({ key: proposalsOpenKey(credential), value: entries.length === 0 ? null : JSON.stringify(entries) });

export function policyOf(reads: ProposalReads): ApprovalPolicy {
  const text = reads.record(approvalPolicyKey);
  return text === undefined ? defaultPolicy : decodePolicy(text);
}

/** The records a proposal decision reads, in the order they can be known: by id, then the proposal, then its proposer's open list. */
export const proposalIdOf = (op: Operation): string | null => (op.command.type === 'reject_proposal' ? op.command.proposal : (op.approval?.proposal ?? null));

export function proposalByIdKey(reads: ProposalReads, id: string): string | null {
  const cseq = reads.record(proposalIdKey(id));
  return cseq === undefined ? null : proposalKey(Number(cseq));
}

function findProposal(reads: ProposalReads, id: string): Proposal | null {
  const key = proposalByIdKey(reads, id);
  const text = key === null ? undefined : reads.record(key);
  return text === undefined ? null : decodeProposal(text);
}

export type ProposalEffects = { readonly records: readonly RecordWrite[]; readonly proposal: string } | Refusal;

/** A proposal stored: the member's bound (expired ones no longer count), the policy's time to live. */
export function decidePropose(op: Operation, cmd: Extract<Command, { type: 'propose' }>, reads: ProposalReads, atMs: number, id: string): ProposalEffects {
  const proposer = memberOf(reads, op.actor.credential);
  if (proposer === undefined) return refusal('ERR-NotAuthorised', 'proposals are made by members of the operator');
  const open = openEntries(reads, proposer.credential).filter((e) => e.expiresAtMs > atMs);
  if (open.length >= proposalsOpenPerMemberMax) return refusal('ERR-BoundExceeded', `member ${proposer.name} holds ${proposalsOpenPerMemberMax} open proposals, the most allowed`);
  const expiresAtMs = atMs + policyOf(reads).ttlMs;
  const proposal: Proposal = {
    id, cseq: op.cseq, request: cmd.request, justification: cmd.justification, acts: cmd.acts, approverRole: cmd.approverRole,
    proposer: proposer.name, proposerCredential: proposer.credential, proposedAtMs: atMs, expiresAtMs,
    state: 'open', decidedBy: null, decidedByCredential: null, decidedAtMs: null, reason: null, operation: null,
  };
  return {
    proposal: id,
    records: [
      { key: proposalKey(op.cseq), value: JSON.stringify(proposal) },
      { key: proposalIdKey(id), value: String(op.cseq) },
      openWrite(proposer.credential, [...open, { cseq: op.cseq, expiresAtMs }]),
    ],
  };
}

/** Why `credential` may not decide `p` now (approve, or reject when `mayWithdraw`), or null. */
function deciderRefusal(reads: ProposalReads, p: Proposal, credential: CredentialId, atMs: number, approving: boolean): Refusal | null {
  const state = stateAt(p, atMs);
  if (state !== 'open') return refusal('ERR-OperationTerminal', `proposal ${p.id} is ${state}`);
  const decider = memberOf(reads, credential);
  if (decider === undefined || decider.removedAtMs !== null) return refusal('ERR-CredentialInvalid', 'the credential is no live member of the operator');
  if (credential === p.proposerCredential) {
    return approving ? refusal('ERR-NotAuthorised', `member ${decider.name} proposed ${p.id}: another member approves it`) : null;
  }
  return holdsRole(decider.role, p.approverRole) ? null : refusal('ERR-NotAuthorised', `deciding ${p.id} needs ${p.approverRole}; member ${decider.name} is ${decider.role}`);
}

function decided(reads: ProposalReads, p: Proposal, change: Partial<Proposal>, by: CredentialId, atMs: number): RecordWrite[] {
  const name = memberOf(reads, by)!.name;
  const next: Proposal = { ...p, ...change, decidedBy: name, decidedByCredential: by, decidedAtMs: atMs };
  return [{ key: proposalKey(p.cseq), value: JSON.stringify(next) }, openWrite(p.proposerCredential, openEntries(reads, p.proposerCredential).filter((e) => e.cseq !== p.cseq && e.expiresAtMs > atMs))];
}

/** A rejection by a member who could approve it, or the proposer's withdrawal. */
export function decideReject(op: Operation, cmd: Extract<Command, { type: 'reject_proposal' }>, reads: ProposalReads, atMs: number): readonly RecordWrite[] | Refusal {
  const p = findProposal(reads, cmd.proposal);
  if (p === null) return refusal('ERR-UnknownOperation', `no proposal ${cmd.proposal}`);
  const refused = deciderRefusal(reads, p, op.actor.credential, atMs, false);
  return refused ?? decided(reads, p, { state: 'rejected', reason: cmd.reason }, op.actor.credential, atMs);
}

/**
 * The approval an approved act carries, decided before the act: the proposal open, the
 * approver another live member of the role it needs, the act its proposer's. Its writes
 * stand whether the act then completes or is rejected (an approved act is decided like
 * any command).
 */
export function decideApproval(act: { ref: string; proposer: CredentialId }, approval: OperationApproval, reads: ProposalReads, atMs: number): { records: readonly RecordWrite[]; proposal: Proposal } | Refusal {
  const p = findProposal(reads, approval.proposal);
  if (p === null) return refusal('ERR-UnknownOperation', `no proposal ${approval.proposal}`);
  if (p.proposerCredential !== act.proposer) return refusal('ERR-NotAuthorised', `the act of ${p.id} is its proposer's`);
  const refused = deciderRefusal(reads, p, approval.approver, atMs, true);
  return refused ?? { records: decided(reads, p, { state: 'approved', operation: act.ref }, approval.approver, atMs), proposal: p };
}
