/**
 * The operator audit trail (CONTRACT 13): one item per act of a member, at `au/<seq>`,
 * written in the batch of the round that decides the act (a command, a sign-in, a
 * backup taken), so the trail never misses an act that happened nor shows one that did
 * not. Part of the book: backups carry it.
 */
import { check, recordJson } from '../model/decode.js';
import { auditKey } from '../model/keys.js';
import type { Command, Operation } from '../model/model.js';
import type { CredentialId } from '../model/values.js';
import type { Member } from './members.js';

export interface AuditItem {
  readonly seq: number;
  readonly atMs: number;
  /** The member's name as it was when it acted. */
  readonly member: string;
  readonly credential: CredentialId;
  /** The route's operationId (as the edge named it), or `sign_in`, `backup`. */
  readonly act: string;
  readonly operation: string | null;
  readonly proposal: string | null;
  readonly justification: string | null;
  readonly approval: string | null;
}

export function decodeAuditItem(text: string): AuditItem {
  const what = 'audit item';
  const j = recordJson(text, what);
  check.integer(j, 'seq', what);
  check.integer(j, 'atMs', what);
  check.string(j, 'member', what);
  check.string(j, 'credential', what);
  check.string(j, 'act', what);
  for (const name of ['operation', 'proposal', 'justification', 'approval']) check.nullableString(j, name, what);
  return j as unknown as AuditItem;
}

/** The justification a command carries, if any (freezes, restrictions, issuance grants). */
function justificationOf(command: Command): string | null {
  return 'justification' in command && typeof command.justification === 'string' ? command.justification : null;
}

/** The proposal a proposal's own command names: the one it made (its decision's `result`), or the one it rejects. */
function proposalOf(op: Operation, result: Operation['result']): string | null {
  if (op.command.type === 'reject_proposal') return op.command.proposal;
  return result?.proposal ?? null;
}

/** Numbers a round's audit items from the head's count on. */
export class AuditTrail {
  private readonly items: AuditItem[] = [];

  constructor(private seq: number) {}

  get lastSeq(): number {
    return this.seq;
  }

  /** A member's act other than a command of the rounds (a sign-in, a backup, a command decided at once). */
  act(member: Member, act: string, atMs: number, about: { operation: string | null; justification: string | null; proposal?: string; approval?: string } = { operation: null, justification: null }): void {
    this.items.push({ seq: ++this.seq, atMs, member: member.name, credential: member.credential, act, operation: about.operation, justification: about.justification, proposal: about.proposal ?? null, approval: about.approval ?? null });
  }

  /**
   * A member's command, decided (completed or rejected) in this round with `result`; `approved`, an act
   * an approved proposal took (its justification is the proposal's, its approval the approver's name).
   */
  command(member: Member, op: Operation, result: Operation['result'], atMs: number, approved: { proposal: string; justification: string; approval: string } | null = null): void {
    const about = approved ?? { proposal: proposalOf(op, result), justification: justificationOf(op.command), approval: op.unapproved ? 'none available' : null };
    this.items.push({ seq: ++this.seq, atMs, member: member.name, credential: op.actor.credential, act: op.act ?? op.command.type, operation: op.ref, ...about });
  }

  writes(): { type: 'put'; key: string; value: string }[] {
    return this.items.map((item) => ({ type: 'put', key: auditKey(item.seq), value: JSON.stringify(item) }));
  }
}
