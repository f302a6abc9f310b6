/**
 * The approval policy (CONTRACT 13): which acts of a member need a second member. Kept
 * in the book at one record (the config seeds it when the book has none); changed only by
 * an approved proposal of `set_approval_policy`. Pure: what an act is, which rules cover
 * it, whether a rule is in force (another live member could approve it).
 */
import { damaged, members, recordJson } from '../model/decode.js';
import type { Command, Role } from '../model/model.js';
import { type AssetSymbol, type CredentialId, parseAssetSymbol } from '../model/values.js';
import { type Member, holdsRole } from './members.js';

export type ApprovalAct = 'issuance_grants' | 'issuance_above' | 'freeze' | 'close' | 'restrict' | 'legal_disclosure' | 'assets' | 'members' | 'backup' | 'policy';
export const approvalActs = members<ApprovalAct>({ issuance_grants: true, issuance_above: true, freeze: true, close: true, restrict: true, legal_disclosure: true, assets: true, members: true, backup: true, policy: true });

export interface ApprovalPolicy {
  readonly rules: readonly ApprovalAct[];
  /** Per asset symbol, minor units as decimal text: a treasury's outgoing transfer above it is `issuance_above`. */
  readonly issuanceAboveMinor: Readonly<Record<string, string>>;
  readonly ttlMs: number;
}

export const defaultTtlMs = 86_400_000;
/** The longest a proposal may stay open: a year. */
export const ttlMsMax = 366 * 86_400_000;
export const defaultPolicy: ApprovalPolicy = { rules: ['members', 'policy', 'backup', 'legal_disclosure'], issuanceAboveMinor: {}, ttlMs: defaultTtlMs };

const minorPattern = /^(0|[1-9][0-9]{0,37})$/;

/** A policy as given (config, request body), checked; a string says what is wrong. */
export function parsePolicy(value: unknown): ApprovalPolicy | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'the approval policy is an object';
  const v = value as Record<string, unknown>;
  for (const name of Object.keys(v)) if (!['rules', 'issuanceAboveMinor', 'ttlMs'].includes(name)) return `the approval policy has no member ${JSON.stringify(name).slice(0, 80)}`;
  const rules = v.rules ?? defaultPolicy.rules;
  if (!Array.isArray(rules) || rules.length > approvalActs.length || !rules.every((r) => approvalActs.includes(r as ApprovalAct))) return `rules is a list of ${approvalActs.join(', ')}`;
  if (new Set(rules).size !== rules.length) return 'rules names an act twice';
  const above = v.issuanceAboveMinor ?? {};
  if (typeof above !== 'object' || above === null || Array.isArray(above)) return 'issuanceAboveMinor maps asset symbols to minor units';
  const entries = Object.entries(above as Record<string, unknown>);
  if (entries.length > 256) return 'issuanceAboveMinor names at most 256 assets';
  for (const [symbol, minor] of entries) {
    try {
      parseAssetSymbol(symbol, 'issuanceAboveMinor');
    } catch {
      return 'issuanceAboveMinor maps asset symbols to minor units';
    }
    if (typeof minor !== 'string' || !minorPattern.test(minor)) return `issuanceAboveMinor.${symbol} is minor units as a decimal string`;
  }
  const ttlMs = v.ttlMs ?? defaultTtlMs;
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs < 1000 || ttlMs > ttlMsMax) return `ttlMs is 1000-${ttlMsMax}`;
  return { rules: rules as ApprovalAct[], issuanceAboveMinor: Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1))) as Record<string, string>, ttlMs };
}

export function decodePolicy(text: string): ApprovalPolicy {
  const what = 'approval policy';
  const parsed = parsePolicy(recordJson(text, what));
  return typeof parsed === 'string' ? damaged(what, parsed) : parsed;
}

/** The acts the route `operationId` is, before its body is looked at (the body-dependent ones: `approvalActsOf`). */
const routeActs: Readonly<Record<string, ApprovalAct>> = {
  issueIssuanceGrant: 'issuance_grants',
  freezeAccount: 'freeze',
  unfreezeAccount: 'freeze',
  closeAccount: 'close',
  restrictIdentity: 'restrict',
  unrestrictIdentity: 'restrict',
  registerAsset: 'assets',
  bindAsset: 'assets',
  deprecateAsset: 'assets',
  addMember: 'members',
  setMemberRole: 'members',
  removeMember: 'members',
  backupBook: 'backup',
  setApprovalPolicy: 'policy',
};

/** What an act needs from its approver: admin for members, the policy and backups; operator for the rest. */
export const approverRole = (act: ApprovalAct): Role => (act === 'members' || act === 'policy' || act === 'backup' ? 'admin' : 'operator');
/** The role approving every one of `acts` needs. */
export const approverRoleOf = (acts: readonly ApprovalAct[]): Role => (acts.some((a) => approverRole(a) === 'admin') ? 'admin' : 'operator');

/**
 * The acts a request is: by its route, and by what it carries (a disclosure under a legal
 * obligation; a transfer out of a treasury above the asset's threshold — `isTreasury`
 * answers for each debited account).
 */
export function approvalActsOf(operationId: string, command: Command | null, policy: ApprovalPolicy, isTreasury: (account: string) => boolean, legalObligation = false): ApprovalAct[] {
  const acts: ApprovalAct[] = [];
  const byRoute = routeActs[operationId];
  if (byRoute !== undefined) acts.push(byRoute);
  if (legalObligation) acts.push('legal_disclosure');
  if (command?.type === 'transfer' && command.legs.some((leg) => aboveThreshold(policy, leg.asset, leg.amountMinor) && isTreasury(leg.from))) acts.push('issuance_above');
  return acts;
}

function aboveThreshold(policy: ApprovalPolicy, asset: AssetSymbol, amountMinor: bigint): boolean {
  const threshold = policy.issuanceAboveMinor[asset];
  return threshold !== undefined && amountMinor > BigInt(threshold);
}

/** Whether a transfer's legs are checked against treasuries at all (so the edge reads accounts only then). */
export const mayBeIssuanceAbove = (command: Command, policy: ApprovalPolicy): boolean =>
  policy.rules.includes('issuance_above') && command.type === 'transfer' && command.legs.some((leg) => aboveThreshold(policy, leg.asset, leg.amountMinor));

/**
 * The rule that stops `acts` being taken directly by `actor`, or null. A rule is in
 * force only while another live member holds the role approving its act needs, so
 * `root` alone can still build a team. The policy act is covered whatever the rules say.
 */
export function ruleInForce(policy: ApprovalPolicy, acts: readonly ApprovalAct[], everyMember: readonly Member[], actor: CredentialId): ApprovalAct | null {
  for (const act of acts) {
    if (act !== 'policy' && !policy.rules.includes(act)) continue;
    const needed = approverRole(act);
    if (everyMember.some((m) => m.removedAtMs === null && m.credential !== actor && holdsRole(m.role, needed))) return act;
  }
  return null;
}

/** Whether some rule would cover `acts` if an approver were there (the audit's `approval: "none available"`). */
export const coveredByRules = (policy: ApprovalPolicy, acts: readonly ApprovalAct[]): boolean => acts.some((a) => a === 'policy' || policy.rules.includes(a));
