/**
 * The book's records. Amounts are bigint minor units; times are ms since the epoch.
 * Records are encoded for the store by codec.ts (bigint as decimal text).
 */
import { amountMinorMax } from '../constants.js';
import type { Refusal } from '../errors.js';
import type { AccountId, AssetSymbol, CredentialId, GrantId, IdentityId, PartyId, ReferenceJson } from './values.js';

export type AssetKind = 'fiat' | 'stable' | 'native' | 'other';
export type AssetStatus = 'active' | 'deprecated';
export type AssetBinding = 'book_only' | 'binding' | 'bound';

export interface Asset {
  readonly id: AssetSymbol;
  /** Numeric code, the asset's registration order (the trial balance's `currency`). */
  readonly code: number;
  readonly kind: AssetKind;
  readonly precision: number;
  readonly status: AssetStatus;
  readonly binding: AssetBinding;
  readonly location: string | null;
}

export interface Identity {
  readonly id: IdentityId;
  readonly createdAtMs: number;
  /** Accounts this identity owns, in opening order, closed ones included (bounded by accountsKeptPerIdentityMax). */
  readonly accounts: readonly AccountId[];
  /** How many of `accounts` are closed, which do not count toward accountsPerIdentityMax (CONTRACT 8); absent in records from before: none counted. */
  readonly closedAccounts?: number;
  /** Restricted by the operator (CONTRACT 10): its commands are refused; absent in records from before. */
  readonly restricted?: boolean;
}

export type AccountKind = 'customer' | 'treasury';
export type Custody = 'delegated' | 'owned';
export type AccountStatus = 'active' | 'frozen' | 'closed';

/** One way an account can be recovered without its owner (spec 2.8, CONTRACT 8): the named authority, after a delay. */
export interface RecoveryMechanism {
  readonly mechanism: 'recovery_authority';
  readonly authority: IdentityId;
  readonly delayMs: number;
}

export type CustodyChangeKind = 'recovery' | 'succession';
export type CustodyChangeState = 'pending' | 'cancelled' | 'completed';

/** A recovery or succession (CONTRACT 8), kept with its account; `pending` is the reference of the operation that opened it. */
export interface CustodyChange {
  readonly pending: string;
  readonly kind: CustodyChangeKind;
  readonly newOwner: IdentityId;
  /** Recovery only: the new owner's account that receives the sweep. */
  readonly to: AccountId | null;
  /** Who opened it: only it completes it. */
  readonly openedBy: IdentityId;
  readonly initiatedAtMs: number;
  readonly effectiveAtMs: number;
  readonly state: CustodyChangeState;
}

export interface Account {
  readonly id: AccountId;
  readonly owner: IdentityId;
  readonly kind: AccountKind;
  readonly custody: Custody;
  readonly status: AccountStatus;
  readonly openedAtMs: number;
  /** Count of completed custody changes (reclaim, succession, recovery); a reclaim proof signs it. */
  readonly epoch: number;
  /** Treasury accounts only: how far below zero `available` may go, per asset. */
  readonly treasuryLimits: Readonly<Record<string, bigint>>;
  /** Owned custody: the recovery mechanisms fixed when custody became owned (absent: the owner's current terms apply). */
  readonly mechanisms?: readonly RecoveryMechanism[];
  /** Recoveries and successions, oldest first, the latest custodyChangesKeptMax (absent: none). */
  readonly changes?: readonly CustodyChange[];
}

export type Layer = 'available' | 'reserved' | 'encumbered';
export const layers: readonly Layer[] = ['available', 'reserved', 'encumbered'];

export interface Balance {
  readonly available: bigint;
  readonly reserved: bigint;
  readonly encumbered: bigint;
}
export const zeroBalance: Balance = Object.freeze({ available: 0n, reserved: 0n, encumbered: 0n });

/** A balance with one layer moved by a signed amount (written out: this runs for every entry). */
export function moved(b: Balance, layer: Layer, signedMinor: bigint): Balance {
  switch (layer) {
    case 'available':
      return { available: b.available + signedMinor, reserved: b.reserved, encumbered: b.encumbered };
    case 'reserved':
      return { available: b.available, reserved: b.reserved + signedMinor, encumbered: b.encumbered };
    case 'encumbered':
      return { available: b.available, reserved: b.reserved, encumbered: b.encumbered + signedMinor };
  }
}

const amountMinorMin = -amountMinorMax;
const inAmountRange = (v: bigint): boolean => v <= amountMinorMax && v >= amountMinorMin;
const thirdMax = amountMinorMax / 3n;
const thirdMin = -thirdMax;
const inThird = (v: bigint): boolean => v <= thirdMax && v >= thirdMin;

/**
 * Whether a balance (an account's in one asset, or an asset's totals) stays within what
 * the codec and CONTRACT 3 carry: each layer, and their sum, at most 2^128 - 1 either
 * side of zero. The sum bounds a reservation's return to available, so an expiry (which
 * no one can refuse) never passes the ceiling either. Genesis openings use it too.
 */
export function withinAmountCeiling(b: Balance): boolean {
  if (!inAmountRange(b.available) || !inAmountRange(b.reserved) || !inAmountRange(b.encumbered)) return false;
  // Layers each within a third of the ceiling cannot sum past it: no sum made (each bigint sum is an allocation; this runs for every entry).
  if (inThird(b.available) && inThird(b.reserved) && inThird(b.encumbered)) return true;
  return inAmountRange(b.available + b.reserved + b.encumbered);
}


/** A member's role (CONTRACT 13); roles nest: admin ⊃ operator ⊃ auditor. */
export type Role = 'auditor' | 'operator' | 'admin';

export type AuthorityKind = 'owner' | 'delegated' | 'operator' | 'issuance' | 'recovery';

/** Who acted and under what authority; recorded on every posting (spec 2.7). */
export interface Authority {
  readonly credential: CredentialId;
  readonly grant: GrantId | null;
  readonly kind: AuthorityKind;
  readonly onBehalfOf: IdentityId | null;
  readonly principal: IdentityId;
}

export type Direction = 'debit' | 'credit';
export type PostingKind = 'opening' | 'transfer' | 'reserve' | 'capture' | 'release' | 'expiry' | 'recovery' | 'deposit' | 'withdrawal';
export type PostingStatus = 'held' | 'completed' | 'returned' | 'reversed' | 'opening';

/** One append-only journal entry against one account, asset and balance layer. */
export interface Posting {
  readonly seq: number;
  readonly atMs: number;
  readonly account: AccountId;
  readonly asset: AssetSymbol;
  readonly amountMinor: bigint;
  readonly direction: Direction;
  readonly layer: Layer;
  readonly kind: PostingKind;
  readonly status: PostingStatus;
  readonly operation: string;
  readonly counterparty: AccountId | null;
  readonly authorities: readonly Authority[];
  readonly reference: ReferenceJson | null;
  /** The account's balance in this asset just after this entry (statements read it). */
  readonly after: Balance;
}

export interface Leg {
  readonly from: AccountId;
  readonly to: AccountId;
  readonly asset: AssetSymbol;
  readonly amountMinor: bigint;
}

/**
 * A credential a command registers, verified at the edge: the ceremony's signature
 * is checked there, while what is state (the challenge's single use) is the decision's.
 */
export interface NewCredential {
  readonly scheme: Scheme;
  /** `key`: ed25519 public key hex; `webauthn-es256`: COSE public key, base64url; `api-key`: null. */
  readonly verifier: string | null;
  /** `api-key`: SHA-256 hex of the key drawn at the edge (the key itself is never stored). */
  readonly tokenHash: string | null;
  /** `webauthn-es256`: the register challenge the attestation was made over, consumed by the decision. */
  readonly challenge: string | null;
  /** `webauthn-es256`: the authenticator's credential id (base64url) and sign counter. */
  readonly webauthnId: string | null;
  readonly counter: number;
}

// ---------------------------------------------------------------------------------
// Settlement (src/settlement/flows.ts decides them; docs/settlement.md)

/** Where a withdrawal sends value: a plain layer account, or an account on another deployment of the layer. */
export type Destination = { readonly account: string } | { readonly instance: number; readonly accountRef: string };

/** A deposit as the layer shows it: its inbox position and digest, what and for whom, and the block that carried it (null: none yet). */
export interface DepositFact {
  readonly seq: number;
  readonly digest: string;
  readonly location: string;
  readonly amountMinor: bigint;
  readonly accountRef: string;
  readonly height: number | null;
}

/** What one block of the layer says that concerns the book (taken from the adapter at the edge). */
export interface SettleBlock {
  readonly height: number;
  readonly deposits: readonly DepositFact[];
  readonly instructions: readonly { readonly digest: string; readonly location: string; readonly amountMinor: bigint }[];
  readonly expired: readonly string[];
  readonly attestations: readonly { readonly location: string; readonly symbol: string; readonly decimals: number; readonly status: 'active' | 'retired' }[];
}

export type SettlementCommand =
  | { readonly type: 'register_asset'; readonly asset: AssetSymbol; readonly kind: AssetKind; readonly precision: number }
  | { readonly type: 'bind_asset'; readonly asset: AssetSymbol; readonly location: string }
  | { readonly type: 'deprecate_asset'; readonly asset: AssetSymbol }
  | {
      readonly type: 'withdraw';
      readonly account: AccountId;
      readonly asset: AssetSymbol;
      readonly amountMinor: bigint;
      readonly destination: Destination;
      readonly deadlineMs: number;
    }
  /**
   * Takes in blocks after the last final height taken in, up to `headHeight`; those ≤ `finalHeight` are final.
   * `due`: withdrawals whose expiry is at most `finalHeight` (as the edge read them): those no final block carried expire.
   */
  | { readonly type: 'settle'; readonly finalHeight: number; readonly headHeight: number; readonly blocks: readonly SettleBlock[]; readonly due: readonly string[] }
  /** One inbox record observed on request; `final` when the block carrying it is final. */
  | { readonly type: 'observe'; readonly deposit: DepositFact; readonly final: boolean };

/** Spec 2.2 `settlement`, already in its wire shape (amounts as decimal strings). */
export type SettlementResult = Readonly<Record<string, unknown>>;

/** Commands, as decided by the kernel. Parsed and typed at the edge. */
export type Command =
  | { readonly type: 'transfer'; readonly legs: readonly Leg[]; readonly deadlineMs: number }
  | {
      readonly type: 'reserve';
      readonly payer: AccountId;
      readonly asset: AssetSymbol;
      readonly amountMinor: bigint;
      readonly deadlineMs: number;
    }
  | { readonly type: 'capture'; readonly reservation: string; readonly to: AccountId; readonly amountMinor: bigint | null }
  | { readonly type: 'release'; readonly reservation: string }
  | {
      readonly type: 'open_account';
      readonly owner: IdentityId;
      readonly kind: AccountKind;
      readonly custody: Custody;
      readonly treasuryLimits: Readonly<Record<string, bigint>>;
      /** Owned custody: the digest of the recovery terms the holder acknowledged (absent in commands from before). */
      readonly acknowledged?: string | null;
    }
  | { readonly type: 'create_identity'; readonly credential: NewCredential }
  | {
      readonly type: 'register_credential';
      /** The identity whose set the credential joins. */
      readonly identity: IdentityId;
      readonly credential: NewCredential;
      /** Accounts it reaches, or null for all of the identity's (within the presenting credential's scope). */
      readonly scope: readonly AccountId[] | null;
      /** POST /v1/ops/members: the credential joins the operator's set as this member (CONTRACT 13). */
      readonly member?: { readonly name: string; readonly role: Role };
    }
  | { readonly type: 'issue_grant'; readonly terms: GrantTerms; readonly justification: string | null }
  | { readonly type: 'revoke_grant'; readonly grant: GrantId }
  /** POST /v1/ops/integrating-parties: the operator ties principals (identities) to a new party. */
  | { readonly type: 'register_party'; readonly principals: readonly IdentityId[] }
  /** POST /v1/ops/members/{credential}/role and /remove (CONTRACT 13): an admin changes a member. */
  | { readonly type: 'set_member_role'; readonly member: CredentialId; readonly role: Role }
  | { readonly type: 'remove_member'; readonly member: CredentialId }
  | ProposalCommand
  | CustodyCommand
  | SettlementCommand;

/**
 * Dual control (CONTRACT 13, src/auth/proposals.ts): a proposal stored, one rejected, the
 * approval policy changed. An approval is no command of its own: it is the proposed act,
 * submitted under `proposal:<id>` and carrying `Operation.approval`.
 */
export type ProposalCommand =
  | {
      readonly type: 'propose';
      /** `{method, path, body, on_behalf_of?}` as canonical JSON text, checked at the edge as its route checks it. */
      readonly request: string;
      readonly justification: string;
      /** The approval rules the request is (src/auth/approvals.ts), and the role approving it needs. */
      readonly acts: readonly string[];
      readonly approverRole: Role;
    }
  | { readonly type: 'reject_proposal'; readonly proposal: string; readonly reason: string }
  /** The approval policy's text (src/auth/approvals.ts), checked at the edge. */
  | { readonly type: 'set_approval_policy'; readonly policy: string };

/** An act taken by an approved proposal: the proposal and the approving member's credential. */
export interface OperationApproval {
  readonly proposal: string;
  readonly approver: CredentialId;
}

/**
 * A reclaim's proof (CONTRACT 5, 8). A `key` signature is checked by the decision against
 * the epoch it finds; a passkey assertion was verified at the edge, and the decision takes
 * its challenge and moves the counter, in order with every other use.
 */
export type ReclaimProof =
  | { readonly scheme: 'key'; readonly signature: string }
  | { readonly scheme: 'webauthn-es256'; readonly challenge: string; readonly counter: number };

/** The custody commands' types: they are decided by src/custody/ and encoded as they stand (no bigint). */
export const custodyCommandTypes: ReadonlySet<string> = new Set([
  'reclaim',
  'open_custody_change',
  'cancel_custody_change',
  'complete_custody_change',
  'freeze_account',
  'unfreeze_account',
  'close_account',
  'restrict_identity',
  'unrestrict_identity',
] satisfies CustodyCommand['type'][]);

export const isCustodyCommand = (command: Command): command is CustodyCommand => custodyCommandTypes.has(command.type);

/** Custody and the account and identity lifecycle (CONTRACT 8, 10): src/custody/. */
export type CustodyCommand =
  | { readonly type: 'reclaim'; readonly account: AccountId; readonly credential: CredentialId; readonly acknowledged: string | null; readonly proof: ReclaimProof }
  | { readonly type: 'open_custody_change'; readonly account: AccountId; readonly kind: CustodyChangeKind; readonly newOwner: IdentityId; readonly to: AccountId | null }
  | { readonly type: 'cancel_custody_change'; readonly account: AccountId; readonly pending: string }
  | { readonly type: 'complete_custody_change'; readonly account: AccountId; readonly pending: string }
  | { readonly type: 'freeze_account'; readonly account: AccountId; readonly justification: string }
  | { readonly type: 'unfreeze_account'; readonly account: AccountId; readonly justification: string }
  | { readonly type: 'close_account'; readonly account: AccountId }
  | { readonly type: 'restrict_identity'; readonly identity: IdentityId; readonly justification: string }
  | { readonly type: 'unrestrict_identity'; readonly identity: IdentityId; readonly justification: string };

export type CommandType = Command['type'];

export type OperationState = 'Received' | 'Reserved' | 'Instructed' | 'Submitted' | 'Completed' | 'Rejected' | 'Expired' | 'Captured' | 'Released';
export const terminalStates: ReadonlySet<OperationState> = new Set(['Completed', 'Rejected', 'Expired', 'Captured', 'Released']);

export interface OperationResult {
  readonly account?: AccountId;
  readonly identity?: IdentityId;
  readonly credential?: CredentialId;
  readonly party?: PartyId;
  readonly grant?: GrantId;
  readonly postings?: readonly number[];
  /** A custody change opened, cancelled or completed: the operation that opened it, and when it may complete. */
  readonly pending?: string;
  readonly effectiveAtMs?: number;
  /** Spec 2.2 `settlement`, as it goes on the wire (amounts are decimal strings already). */
  readonly settlement?: SettlementResult;
  /** A proposal stored (CONTRACT 13). */
  readonly proposal?: string;
}

/** What a reservation holds while Reserved. */
export interface Hold {
  readonly payer: AccountId;
  readonly asset: AssetSymbol;
  readonly amountMinor: bigint;
  readonly deadlineMs: number;
  /** The authority the reservation was made under (its expiry is recorded under it); absent in holds made before it was kept. */
  readonly authority?: Authority;
}

export interface Operation {
  readonly ref: string;
  /** Submission order; decisions follow it. */
  readonly cseq: number;
  readonly command: Command;
  readonly actor: Authority;
  /** The accounts the submitting credential reaches, or null for all its identity's. */
  readonly scope: readonly AccountId[] | null;
  readonly state: OperationState;
  readonly submittedAtMs: number;
  readonly decidedAtMs: number | null;
  readonly clientKey: string;
  readonly clientKeyDerived: boolean;
  readonly reference: ReferenceJson | null;
  readonly result: OperationResult | null;
  readonly error: Refusal | null;
  readonly hold: Hold | null;
  /** A member's command: the route it came by (its operationId), for the audit trail (CONTRACT 13). */
  readonly act?: string;
  /** An act taken by an approved proposal (CONTRACT 13); its decision approves the proposal first. */
  readonly approval?: OperationApproval;
  /** A covered act taken directly because no other member could approve it (the audit's `approval: "none available"`). */
  readonly unapproved?: true;
}

/** The head of the book, rewritten by every decision write. */
export interface Head {
  /** Last command sequence number decided. */
  readonly decidedCseq: number;
  /** Journal position: the last posting sequence number. A query's `view`. */
  readonly postingSeq: number;
  /** Last event sequence number. */
  readonly eventSeq: number;
  /** Decision time of the newest write; later decisions never go below it. */
  readonly lastAtMs: number;
  /** Accounts in the book. */
  readonly accounts: number;
  /** Last audit item's sequence number (CONTRACT 13); absent in books from before the trail: 0. */
  readonly auditSeq?: number;
}

/** How a credential proves its holder (spec 5). */
export type Scheme = 'key' | 'webauthn-es256' | 'api-key';

// ---------------------------------------------------------------------------------
// Grants (their parsing and use: auth/grants.ts)

/** What a grant may be used for. The spec names `transfer` and `open_account`; the rest are ours. */
export const grantOps = ['transfer', 'reserve', 'capture', 'release', 'open_account', 'withdraw'] as const;
export type GrantOp = (typeof grantOps)[number];
export type GrantKind = 'delegated' | 'issuance';

export type GrantSubject = { readonly account: AccountId } | 'delegated_accounts' | { readonly asset: AssetSymbol } | { readonly identity: IdentityId };

export interface PerWindow {
  readonly lengthMs: number;
  readonly limitMinor: bigint;
}

export interface GrantTerms {
  readonly kind: GrantKind;
  readonly principal: IdentityId;
  readonly subject: GrantSubject;
  readonly ops: readonly GrantOp[];
  readonly assets: readonly AssetSymbol[] | null;
  readonly counterparties: readonly AccountId[] | null;
  readonly expiresAtMs: number | null;
  readonly parent: GrantId | null;
  readonly perOperationMinor: bigint | null;
  readonly perWindow: PerWindow | null;
}

export interface Grant {
  readonly id: GrantId;
  readonly grantor: IdentityId;
  readonly grantedAtMs: number;
  readonly revokedAtMs: number | null;
  /** Issuance grants only: why the operator gave it. */
  readonly justification: string | null;
  readonly terms: GrantTerms;
}
