/**
 * What the book keeps of settlement (docs/settlement.md): how far it has taken in the
 * layer, each inbox record it met and its verdict, each instruction it issued, the
 * account deposits name (`deposit_ref`), and the settlement account, whose balance is
 * the book's record of value held on the layer (its negation, per asset).
 */
import { canonicalJson } from '../model/canonical.js';
import { check, members, recordJson } from '../model/decode.js';
import type { Account, Destination } from '../model/model.js';
import type { AccountId, AssetSymbol, IdentityId } from '../model/values.js';
import { sha256Hex } from '../sha256.js';

/** The withdrawal a pending key names. */
export const pendingRefOf = (key: string): string => key.slice(key.lastIndexOf('/') + 1);

export interface SettlementMeta {
  /** The last final height taken in (0: none). */
  readonly height: number;
  /** The inbox length at that height: the highest seq a final block taken in carried. */
  readonly cut: number;
}

export const freshSettlementMeta: SettlementMeta = { height: 0, cut: 0 };

export function decodeSettlementMeta(text: string | undefined): SettlementMeta {
  if (text === undefined) return freshSettlementMeta;
  const what = 'settlement meta';
  const j = recordJson(text, what);
  return { height: check.integer(j, 'height', what), cut: check.integer(j, 'cut', what) };
}

export type DepositVerdict = 'applied' | 'recorded' | 'unassociated';

/** An inbox record the book met. */
export interface DepositRecord {
  readonly digest: string;
  readonly verdict: DepositVerdict;
  readonly account: AccountId | null;
  readonly asset: AssetSymbol | null;
  /** Minor units, decimal. */
  readonly amount: string;
  /** The operation that applied it (null unless applied). */
  readonly operation: string | null;
}

const depositVerdicts = members<DepositVerdict>({ applied: true, recorded: true, unassociated: true });

export function decodeDepositRecord(text: string | undefined): DepositRecord | undefined {
  if (text === undefined) return undefined;
  const what = 'settlement deposit';
  const j = recordJson(text, what);
  check.string(j, 'digest', what);
  check.oneOf(j, 'verdict', depositVerdicts, what);
  check.nullableString(j, 'account', what);
  check.nullableString(j, 'asset', what);
  check.decimal(j, 'amount', what);
  check.nullableString(j, 'operation', what);
  return j as unknown as DepositRecord;
}

/** What the book made of the latest attestation of an asset's location (the operator reads it in the settlement status). */
export interface AttestationRecord {
  readonly verdict: 'book_only' | 'binding' | 'bound';
  /** Why the layer's word contradicts the asset (`symbol`, `decimals`, `status`); null when it matches. */
  readonly mismatch: string | null;
  /** The final block that carried it. */
  readonly height: number;
  /** The operation that took it in. */
  readonly operation: string;
}

const attestationVerdicts = members<AttestationRecord['verdict']>({ book_only: true, binding: true, bound: true });

export function decodeAttestationRecord(text: string): AttestationRecord {
  const what = 'settlement attestation';
  const j = recordJson(text, what);
  return {
    verdict: check.oneOf(j, 'verdict', attestationVerdicts, what),
    mismatch: check.nullableString(j, 'mismatch', what),
    height: check.integer(j, 'height', what),
    operation: check.string(j, 'operation', what),
  };
}


/** An account's deposit reference (its account view's `deposit_ref`): 32 bytes hex, derived from its id alone. */
export function depositRefOf(account: AccountId): string {
  return sha256Hex(`ledger-deposit-ref:v1:${account}`);
}

/** The account that holds, for the book, what it records as held on the layer (a treasury of the operator with no floor). */
export const settlementAccountId = 'did:ledger:acct:_settlement' as AccountId;

/** How far below zero the settlement account may go in a bound asset: past any sum of amounts (each < 2^128). */
const settlementFloorMinor = 2n ** 255n;

/** The settlement account with `asset` among its assets (created when the first asset is bound). */
export function settlementAccountWith(existing: Account | undefined, asset: AssetSymbol, operator: IdentityId, atMs: number): Account {
  const base: Account = existing ?? { id: settlementAccountId, owner: operator, kind: 'treasury', custody: 'delegated', status: 'active', openedAtMs: atMs, epoch: 0, treasuryLimits: {} };
  return { ...base, treasuryLimits: { ...base.treasuryLimits, [asset]: settlementFloorMinor } };
}

/** An instruction as the book issues it (spec 2.2 Instruction), before its digest. */
export interface InstructionBody {
  readonly amount: string;
  readonly asset: AssetSymbol;
  readonly location: string;
  readonly destination: Destination;
  readonly expiry: number;
  readonly instance: number;
  readonly operation_reference: string;
}

/** The destination as it goes on the wire: `{account}` or `{instance, account_ref}`. */
export function destinationWire(destination: Destination): Record<string, unknown> {
  return 'account' in destination ? { account: destination.account } : { instance: destination.instance, account_ref: destination.accountRef };
}

/** An instruction's identity: hex SHA-256 of the canonical JSON of its body. */
export function instructionDigest(body: InstructionBody): string {
  return sha256Hex(canonicalJson({ ...body, destination: destinationWire(body.destination) }));
}
