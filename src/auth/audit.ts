/**
 * The operator audit trail (CONTRACT 13): one item per act of a member, written in the
 * batch of the round that decides the act (a command, a sign-in, a backup taken), so the
 * trail never misses an act that happened nor shows one that did not. Part of the book:
 * backups carry it. Layout 7 writes a round's items in chunks (`au/<first seq>`,
 * model/compact-chunk.ts); layout 6's one item per entry (`au/<seq>`) reads as it stands.
 */
import { type ChunkCodec, decodeChunk, encodeChunks, isChunk, nullableText, packRef, unpackRef } from '../model/compact-chunk.js';
import { check, damaged, recordJson } from '../model/decode.js';
import { auditKey, auditPrefix, parseSeqHex } from '../model/keys.js';
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

function decodeAuditItem(text: string): AuditItem {
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

const chunkWhat = 'audit chunk';

/**
 * A chunk: [atMs of its first item, strings, ...items], an item [member, credential, act
 * (numbers into the strings), operation (packed), proposal, justification, approval, ms
 * after the chunk's atMs (left off when 0)]; its seq is the key's plus its position.
 */
const auditChunks: ChunkCodec<AuditItem> = {
  joins: (previous, next) => next.seq === previous.seq + 1,
  head: (first) => [first.atMs],
  item: (x, first, strings) => [
    strings.of(x.member),
    strings.of(x.credential),
    strings.of(x.act),
    x.operation === null ? null : packRef(x.operation),
    x.proposal,
    x.justification,
    x.approval,
    x.atMs === first.atMs ? null : x.atMs - first.atMs,
  ],
};

/** The items of one `au/` entry, oldest first: layout 6's one item, or a chunk's. */
export function auditEntryItems(key: string, value: string): AuditItem[] {
  if (!isChunk(value)) return [decodeAuditItem(value)];
  const firstSeq = parseSeqHex(key.slice(auditPrefix.length));
  const chunk = decodeChunk(value, 1, chunkWhat);
  const atMs = chunk.head[0];
  if (typeof atMs !== 'number' || !Number.isSafeInteger(atMs)) damaged(chunkWhat, 'atMs is not an integer');
  return chunk.items.map((f, i) => {
    const afterMs = f[7] ?? 0;
    if (typeof afterMs !== 'number' || !Number.isSafeInteger(afterMs)) damaged(chunkWhat, 'an item\'s ms is not an integer');
    const operation = nullableText(f[3], 'operation', chunkWhat);
    return {
      seq: firstSeq + i,
      atMs: atMs + afterMs,
      member: chunk.string(f[0], 'member'),
      credential: chunk.string(f[1], 'credential') as CredentialId,
      act: chunk.string(f[2], 'act'),
      operation: operation === null ? null : unpackRef(operation, chunkWhat),
      proposal: nullableText(f[4], 'proposal', chunkWhat),
      justification: nullableText(f[5], 'justification', chunkWhat),
      approval: nullableText(f[6], 'approval', chunkWhat),
    };
  });
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

  /** The round's items in chunks (one entry per compactChunkItemsMax items, about). */
  writes(): { type: 'put'; key: string; value: string }[] {
    return encodeChunks(this.items, auditChunks).map((c) => ({ type: 'put', key: auditKey(c.first.seq), value: c.value }));
  }
}
