/**
 * Members of the operator principal (CONTRACT 13): each operator credential is a named
 * member with a role, kept at `mem/<credential>`. Pure and synchronous over prefetched
 * reads, like the other decisions; removed members' records stay (the audit names them).
 */
import { type Refusal, refusal } from '../errors.js';
import { check, members, recordJson } from '../model/decode.js';
import { memberKey } from '../model/keys.js';
import type { Command, Role, Scheme } from '../model/model.js';
import type { CredentialId } from '../model/values.js';
import { membersMax } from '../constants.js';

export interface Member {
  readonly credential: CredentialId;
  readonly name: string;
  readonly role: Role;
  readonly scheme: Scheme;
  readonly addedAtMs: number;
  /** The adding member's name; null for `root`, made at init. */
  readonly addedBy: string | null;
  readonly removedAtMs: number | null;
}

export const roles = members<Role>({ auditor: true, operator: true, admin: true });
const rank: Readonly<Record<Role, number>> = { auditor: 0, operator: 1, admin: 2 };
/** Roles nest: admin may do all an operator may, an operator all an auditor may. */
export const holdsRole = (role: Role, needed: Role): boolean => rank[role] >= rank[needed];

/** `root`: the member whose API key is DIR/operator.key (made at init, or adopted on an older book's first start). */
export const rootCredential = 'did:ledger:cred:operator' as CredentialId;
export const rootMember = (atMs: number): Member => ({ credential: rootCredential, name: 'root', role: 'admin', scheme: 'api-key', addedAtMs: atMs, addedBy: null, removedAtMs: null });

const namePattern = /^[a-z0-9._-]{1,64}$/;
export const isMemberName = (name: string): boolean => namePattern.test(name);

const schemes = members<Scheme>({ key: true, 'webauthn-es256': true, 'api-key': true });

export function decodeMember(text: string): Member {
  const j = recordJson(text, 'member');
  const what = `member ${check.string(j, 'credential', 'member')}`;
  check.string(j, 'name', what);
  check.oneOf(j, 'role', roles, what);
  check.oneOf(j, 'scheme', schemes, what);
  check.integer(j, 'addedAtMs', what);
  check.nullableString(j, 'addedBy', what);
  check.nullableInteger(j, 'removedAtMs', what);
  return j as unknown as Member;
}

/** A record a member decision writes (decide-auth.ts's RecordWrite, without importing it back). */
interface RecordWrite {
  readonly key: string;
  readonly value: string | null;
}

export const memberWrite = (member: Member): RecordWrite => ({ key: memberKey(member.credential), value: JSON.stringify(member) });

/** The role an operator member needs for a command: admin for members, operator for every other command. */
export function commandRole(command: Command): Role {
  if (command.type === 'set_member_role' || command.type === 'remove_member' || command.type === 'set_approval_policy') return 'admin';
  if (command.type === 'register_credential' && command.member !== undefined) return 'admin';
  return 'operator';
}

export interface MemberReads {
  record(key: string): string | undefined;
  /** Credentials under `mem/`, as prefetched (every member, removed ones too). */
  listed(prefix: string): readonly string[];
}

const live = (m: Member | undefined): m is Member => m !== undefined && m.removedAtMs === null;

/** The acting member, read from the prefetched records; undefined for a credential that is no member. */
export function memberOf(reads: Pick<MemberReads, 'record'>, credential: CredentialId): Member | undefined {
  const text = reads.record(memberKey(credential));
  if (text === undefined) return undefined;
  // The same record is read for each command of one member (twice per command: its decision and its audit item).
  if (lastDecoded?.text !== text) lastDecoded = { text, member: decodeMember(text) };
  return lastDecoded.member;
}
/** The member record decoded last, by its stored text (a Member is never changed in place). */
let lastDecoded: { readonly text: string; readonly member: Member } | null = null;

/**
 * Why an operator credential may not have a command decided now: it is no live member
 * (removed while the command was in flight: ERR-CredentialInvalid, as its token now is),
 * or its role is below the command's.
 */
export function memberRefusal(reads: Pick<MemberReads, 'record'>, credential: CredentialId, command: Command): Refusal | null {
  const member = memberOf(reads, credential);
  if (!live(member)) return refusal('ERR-CredentialInvalid', 'the credential is no live member of the operator');
  const needed = commandRole(command);
  return holdsRole(member.role, needed) ? null : refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers this command (member ${member.name} is ${member.role}; it needs ${needed})`);
}

function everyMember(reads: MemberReads, prefix: string): Member[] {
  return reads.listed(prefix).flatMap((credential) => {
    const m = memberOf(reads, credential as CredentialId);
    return m === undefined ? [] : [m];
  });
}

const liveAdmins = (all: readonly Member[]) => all.filter((m) => live(m) && m.role === 'admin');

/** A new member's record, or why not (a name taken by a live member, the book's bound). */
export function decideNewMember(reads: MemberReads, prefix: string, input: { credential: CredentialId; name: string; role: Role; scheme: Scheme; atMs: number; by: CredentialId }): RecordWrite | Refusal {
  const all = everyMember(reads, prefix);
  if (!isMemberName(input.name)) return refusal('ERR-MalformedCommand', 'a member name is 1-64 of [a-z0-9._-]');
  if (all.some((m) => live(m) && m.name === input.name)) return refusal('ERR-InvalidTransition', `a live member is named ${input.name} already`);
  if (all.length >= membersMax) return refusal('ERR-BoundExceeded', `the book holds ${membersMax} member records, the most allowed`);
  const by = memberOf(reads, input.by);
  return memberWrite({ credential: input.credential, name: input.name, role: input.role, scheme: input.scheme, addedAtMs: input.atMs, addedBy: by?.name ?? null, removedAtMs: null });
}

/** A role change or a removal; the last live admin may be neither demoted nor removed. */
export function decideMemberChange(command: Extract<Command, { type: 'set_member_role' | 'remove_member' }>, reads: MemberReads, prefix: string, atMs: number): RecordWrite | Refusal {
  const target = memberOf(reads, command.member);
  if (!live(target)) return refusal('ERR-NotAuthorised', `the initiating principal holds no authority that covers ${command.member}, which is no live member`);
  const leavesAdmin = target.role === 'admin' && (command.type === 'remove_member' || command.role !== 'admin');
  if (leavesAdmin && liveAdmins(everyMember(reads, prefix)).length <= 1) return refusal('ERR-InvalidTransition', `${target.name} is the last live admin`);
  return memberWrite(command.type === 'remove_member' ? { ...target, removedAtMs: atMs } : { ...target, role: command.role });
}
