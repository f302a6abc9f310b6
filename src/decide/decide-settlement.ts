/**
 * Settlement decisions (CONTRACT 9, docs/settlement.md): assets registered, bound and
 * deprecated; withdrawals instructed; the layer's final blocks taken in (deposits
 * credited, instructions Submitted, Completed or Expired, bindings attested); inbox
 * records observed on request. Pure and synchronous like decide.ts: what the layer
 * said is carried in the command (read at the edge), the layer's head height and the
 * instance are passed in.
 */
import { assetsMax, pendingWithdrawalsPerAccountMax } from '../constants.js';
import { type Refusal, refusal } from '../errors.js';
import type { Actor } from '../auth/authority.js';
import { GrantStage, debitAuthority } from './decide-grants.js';
import { type Decision, type DecisionInput, type Entry, type Move, type Reads, availableFloorMinor, ceilingRefusal, decide, done, isRefusal, movable, open, pair, reject } from './decide.js';
import type { Asset, Command, DepositFact, Operation, OperationState, SettleBlock, SettlementCommand } from '../model/model.js';
import type { AccountId, AssetSymbol } from '../model/values.js';
import type { RecordWrite } from './decide-auth.js';
import { memberRefusal } from '../auth/members.js';
import {
  type AttestationRecord,
  type DepositRecord,
  type InstructionBody,
  type SettlementMeta,
  decodeDepositRecord,
  decodeSettlementMeta,
  destinationWire,
  instructionDigest,
  settlementAccountId,
  settlementAccountWith,
} from '../settlement/book.js';
import { settlementKeys } from '../model/keys.js';
import { moneyText } from '../major-units.js';

export interface SettlementReads extends Reads {
  /** The asset bound (or binding) at a layer location. */
  assetAt(location: string): Asset | undefined;
  /** Registered assets, counted (a new one's code is the count). */
  readonly assetCount: number;
}

export interface SettlementInput extends DecisionInput {
  /** The layer's head height as the decision is taken (an instruction's expiry counts from it). */
  readonly layerHeight: number;
  readonly instance: number;
  readonly instructionExpiryBlocks: number;
}

const settlementTypes = new Set<Command['type']>(['register_asset', 'bind_asset', 'deprecate_asset', 'withdraw', 'settle', 'observe']);

export const isSettlementCommand = (command: Command): command is SettlementCommand => settlementTypes.has(command.type);

/** Every command's decision (settlement commands here, the rest in decide.ts), refused whole if it would pass the amount ceiling. */
export function decideCommand(op: Operation, reads: SettlementReads, input: SettlementInput): Decision {
  const decision = decideAny(op, reads, input);
  if (!decision.ok) return decision;
  // Entries first, then the operations moved: the order the round posts them in.
  const over = ceilingRefusal(reads, decision.moves === undefined || decision.moves.length === 0 ? decision.entries : [...decision.entries, ...decision.moves.flatMap((m) => m.entries)]);
  return over === null ? decision : reject(over);
}

function decideAny(op: Operation, reads: SettlementReads, input: SettlementInput): Decision {
  const cmd = op.command;
  // An operator command is its member's: live when decided (a removal in flight wins) and of the role it needs (CONTRACT 13).
  // The daemon's own takings-in of the layer are no member's act.
  if (op.actor.principal === input.principals.operator && cmd.type !== 'settle') {
    const unfit = memberRefusal(reads, op.actor.credential, cmd);
    if (unfit) return reject(unfit);
  }
  if (!isSettlementCommand(cmd)) return decide(op, reads, input);
  const actor: Actor = { principal: op.actor.principal, credential: op.actor.credential, onBehalfOf: op.actor.onBehalfOf, scope: op.scope };
  if (cmd.type === 'withdraw') return decideWithdraw(op, cmd, actor, reads, input);
  // Every other settlement command is the operator's alone (the precheck refused anyone else).
  if (actor.principal !== input.principals.operator) return reject(refusal('ERR-NotAuthorised', 'settlement commands other than withdrawals are the operator\'s'));
  switch (cmd.type) {
    case 'register_asset':
      return decideRegisterAsset(cmd, reads);
    case 'bind_asset':
      return decideBindAsset(cmd, reads, input);
    case 'deprecate_asset': {
      const asset = reads.asset(cmd.asset);
      if (asset === undefined) return reject(refusal('ERR-UnknownAsset', `asset ${cmd.asset} is not registered`));
      if (asset.status === 'deprecated') return reject(refusal('ERR-InvalidTransition', `asset ${cmd.asset} is already deprecated`));
      return done('Completed', [], { assets: [{ ...asset, status: 'deprecated' }] });
    }
    case 'settle':
      return new Intake(op, reads, input).settle(cmd);
    case 'observe':
      return new Intake(op, reads, input).observe(cmd.deposit, cmd.final);
  }
}

function decideRegisterAsset(cmd: Extract<SettlementCommand, { type: 'register_asset' }>, reads: SettlementReads): Decision {
  if (reads.asset(cmd.asset) !== undefined) return reject(refusal('ERR-InvalidTransition', `asset ${cmd.asset} is registered already`));
  // The kernel keeps every asset in memory and reads at most assetsMax back on reopen.
  if (reads.assetCount >= assetsMax) return reject(refusal('ERR-InvalidTransition', `the book holds at most ${assetsMax} assets`));
  const asset: Asset = { id: cmd.asset, code: reads.assetCount, kind: cmd.kind, precision: cmd.precision, status: 'active', binding: 'book_only', location: null };
  return done('Completed', [], { assets: [asset] });
}

function decideBindAsset(cmd: Extract<SettlementCommand, { type: 'bind_asset' }>, reads: SettlementReads, input: SettlementInput): Decision {
  const asset = reads.asset(cmd.asset);
  if (asset === undefined) return reject(refusal('ERR-UnknownAsset', `asset ${cmd.asset} is not registered`));
  if (asset.status === 'deprecated') return reject(refusal('ERR-AssetDeprecated', `asset ${cmd.asset} is deprecated`));
  if (asset.binding !== 'book_only') return reject(refusal('ERR-InvalidTransition', `asset ${cmd.asset} is ${asset.binding} already`));
  const there = reads.assetAt(cmd.location);
  if (there !== undefined && there.id !== asset.id) return reject(refusal('ERR-InvalidTransition', `location ${cmd.location} is ${there.binding} to ${there.id}`));
  const settlement = settlementAccountWith(reads.account(settlementAccountId), asset.id, input.principals.operator, input.atMs);
  return done('Completed', [], {
    assets: [{ ...asset, binding: 'binding', location: cmd.location }],
    accounts: [settlement],
    result: { settlement: { attestation: { asset: asset.id, verdict: 'binding' } } },
  });
}

function decideWithdraw(op: Operation, cmd: Extract<SettlementCommand, { type: 'withdraw' }>, actor: Actor, reads: SettlementReads, input: SettlementInput): Decision {
  if (input.atMs > cmd.deadlineMs) return { ok: false, state: 'Expired', error: null };
  const assetRefusal = movable(reads, cmd.asset);
  if (assetRefusal) return reject(assetRefusal);
  const asset = reads.asset(cmd.asset)!;
  if (asset.binding !== 'bound' || asset.location === null) return reject(refusal('ERR-UnsupportedLeg', `asset ${cmd.asset} is not bound to the settlement layer`));
  const account = open(reads, cmd.account, actor, input.principals);
  if (isRefusal(account)) return reject(account);
  // The same authority path as a transfer's debit: whatever may move value out of the account may withdraw it.
  const stage = new GrantStage();
  const auth = debitAuthority(actor, { op: 'withdraw', account, asset: cmd.asset, counterparty: null, amountMinor: cmd.amountMinor, atMs: input.atMs }, reads, input.principals, stage);
  if (isRefusal(auth)) return reject(auth);
  if (reads.listed(settlementKeys.accountPendingPrefix(account.id)).length >= pendingWithdrawalsPerAccountMax) {
    return reject(refusal('ERR-BoundExceeded', `account ${account.id} has ${pendingWithdrawalsPerAccountMax} withdrawals pending, the most allowed; wait for one to complete or expire`));
  }
  if (reads.balance(account.id, cmd.asset).available - cmd.amountMinor < availableFloorMinor(account, cmd.asset)) {
    return reject(refusal('ERR-InsufficientAvailable', `available balance of ${cmd.account} in ${cmd.asset} does not cover ${moneyText(cmd.amountMinor, cmd.asset, asset.precision)}`));
  }
  const body: InstructionBody = {
    amount: cmd.amountMinor.toString(),
    asset: cmd.asset,
    location: asset.location,
    destination: cmd.destination,
    expiry: input.layerHeight + input.instructionExpiryBlocks,
    instance: input.instance,
    operation_reference: op.ref,
  };
  const digest = instructionDigest(body);
  const entries = pair({ account: account.id, layer: 'available' }, { account: account.id, layer: 'encumbered' }, cmd.asset, cmd.amountMinor, 'withdrawal', 'held', [auth]);
  const instruction = { amount: body.amount, asset: body.asset, destination: destinationWire(body.destination), digest, expiry: body.expiry, operation_reference: op.ref, reserved: true };
  return done('Instructed', entries, {
    records: [...stage.writes(), { key: settlementKeys.instruction(digest), value: op.ref }, { key: settlementKeys.pending(body.expiry, op.ref), value: digest }, { key: settlementKeys.accountPending(account.id, op.ref), value: '' }],
    result: { settlement: { instruction } },
  });
}

/** The instruction a withdrawal issued (its digest and expiry height). */
function instructionOf(op: Operation): { digest: string; expiry: number } | undefined {
  return op.result?.settlement?.instruction as { digest: string; expiry: number } | undefined;
}

/** The layer's facts taken in by one decision: deposits credited, withdrawals moved, bindings attested. */
class Intake {
  private readonly entries: Entry[] = [];
  private readonly records: RecordWrite[] = [];
  private readonly assets = new Map<string, Asset>();
  /** Withdrawals moved, by reference: the state each ends in and its entries. */
  private readonly moves = new Map<string, { state: OperationState; entries: Entry[] }>();
  private readonly deposits = new Map<number, DepositRecord>();
  private readonly attestations: Record<string, unknown>[] = [];
  /** The latest attestation per asset this decision met (one record each). */
  private readonly attested = new Map<string, AttestationRecord>();
  private condition: string | null = null;
  /** Why the last deposit taken in was held rather than credited: crediting it would pass the amount ceiling. */
  private overCeiling: Refusal | null = null;

  constructor(
    private readonly op: Operation,
    private readonly reads: SettlementReads,
    private readonly input: SettlementInput,
  ) {}

  settle(cmd: Extract<SettlementCommand, { type: 'settle' }>): Decision {
    const meta = decodeSettlementMeta(this.reads.record(settlementKeys.meta));
    let cut = meta.cut;
    for (const block of cmd.blocks) {
      const final = block.height <= cmd.finalHeight;
      // A final block is taken in once; one not final yet is seen again once it is.
      if (final && block.height <= meta.height) continue;
      this.block(block, final);
      if (final) for (const d of block.deposits) cut = Math.max(cut, d.seq);
    }
    // Every block up to its expiry is final and taken in: an instruction none of them carried never takes effect.
    for (const ref of cmd.due) this.lapsed(ref, cmd.finalHeight);
    const next: SettlementMeta = { height: Math.max(meta.height, cmd.finalHeight), cut };
    this.records.push({ key: settlementKeys.meta, value: JSON.stringify(next) });
    const moved = [...this.moves].map(([ref, m]) => ({ operation_reference: ref, state: m.state }));
    return this.outcome({ moved, ...(this.attestations.length > 0 ? { attestations: this.attestations } : {}) });
  }

  observe(deposit: DepositFact, final: boolean): Decision {
    const known = this.depositRecord(deposit.seq);
    if (known !== undefined && known.digest !== deposit.digest) return reject(refusal('ERR-EvidenceInsufficient', `the book met another record at seq ${deposit.seq}`));
    if (known?.verdict === 'applied' || (known?.verdict === 'recorded' && !final)) {
      return reject(refusal('ERR-ObservationDuplicate', `coordinate ${deposit.seq} was ${known.verdict} before`));
    }
    const verdict = this.deposit(deposit, final);
    if (this.overCeiling !== null) return reject(this.overCeiling);
    if (verdict === 'unassociated') return reject(refusal('ERR-ObservationUnassociated', `inbox record ${deposit.seq} relates to no account of the book in a bound asset`));
    return this.outcome({ verdict, coordinate: { digest: deposit.digest, instance: this.input.instance, seq: deposit.seq } });
  }

  private outcome(settlement: Record<string, unknown>): Decision {
    const moves: Move[] = [...this.moves].map(([ref, m]) => ({ ref, state: m.state, entries: m.entries }));
    const changed = [...this.assets.values()];
    const withCondition = this.condition === null ? settlement : { ...settlement, condition: this.condition };
    for (const [asset, record] of this.attested) this.records.push({ key: settlementKeys.attestation(asset), value: JSON.stringify(record) });
    return done('Completed', this.entries, { records: this.records, moves, assets: changed, result: { settlement: withCondition } });
  }

  private block(block: SettleBlock, final: boolean): void {
    if (final) for (const attestation of block.attestations) this.attest(attestation, block.height);
    for (const deposit of block.deposits) {
      const known = this.depositRecord(deposit.seq);
      if (known?.verdict === 'applied' || (!final && known !== undefined)) continue;
      this.deposit(deposit, final);
    }
    for (const instruction of block.instructions) this.instructed(instruction, final);
    if (final) for (const digest of block.expired) this.expired(digest);
  }

  private asset(symbol: AssetSymbol): Asset | undefined {
    return this.assets.get(symbol) ?? this.reads.asset(symbol);
  }

  /** An attestation in a final block: a binding whose asset it matches becomes bound; one it contradicts goes back to book_only. */
  private attest(attestation: SettleBlock['attestations'][number], height: number): void {
    const there = this.reads.assetAt(attestation.location);
    const asset = there === undefined ? undefined : this.asset(there.id);
    if (asset === undefined) {
      this.attestations.push({ asset: null, verdict: 'unregistered' });
      return;
    }
    const mismatch =
      attestation.symbol !== asset.id ? 'symbol' : attestation.decimals !== asset.precision ? 'decimals' : attestation.status !== 'active' ? 'status' : null;
    const binding = asset.binding !== 'binding' ? asset.binding : mismatch === null ? 'bound' : 'book_only';
    if (binding !== asset.binding) this.assets.set(asset.id, { ...asset, binding });
    this.attestations.push({ asset: asset.id, verdict: binding, ...(mismatch === null ? {} : { mismatch }) });
    this.attested.set(asset.id, { verdict: binding, mismatch, height, operation: this.op.ref });
  }

  private depositRecord(seq: number): DepositRecord | undefined {
    return this.deposits.get(seq) ?? decodeDepositRecord(this.reads.record(settlementKeys.deposit(seq)));
  }

  /** Takes in one inbox record: credited when final and it names an open account in a bound asset. */
  private deposit(deposit: DepositFact, final: boolean): 'applied' | 'recorded' | 'unassociated' {
    const target = this.reads.record(settlementKeys.depositRef(deposit.accountRef)) as AccountId | undefined;
    const account = target === undefined ? undefined : this.reads.account(target);
    // As this decision has it: an attestation earlier in the same intake may have bound it.
    const at = this.reads.assetAt(deposit.location);
    const asset = at === undefined ? undefined : this.asset(at.id);
    const associated = account !== undefined && account.status === 'active' && asset !== undefined && asset.binding === 'bound';
    const credit = associated ? pair({ account: settlementAccountId, layer: 'available' }, { account: account.id, layer: 'available' }, asset.id, deposit.amountMinor, 'deposit', 'completed', [this.op.actor]) : [];
    // A credit past the ceiling is held, not credited: the intake goes on, and an observation once there is room applies it.
    this.overCeiling = associated && final ? ceilingRefusal(this.reads, [...this.entries, ...credit]) : null;
    const verdict = !associated ? 'unassociated' : final && this.overCeiling === null ? 'applied' : 'recorded';
    const record: DepositRecord = {
      digest: deposit.digest,
      verdict,
      account: associated ? account.id : null,
      asset: associated ? asset.id : null,
      amount: deposit.amountMinor.toString(),
      operation: verdict === 'applied' ? this.op.ref : null,
    };
    this.deposits.set(deposit.seq, record);
    this.records.push({ key: settlementKeys.deposit(deposit.seq), value: JSON.stringify(record) });
    if (verdict === 'applied') this.entries.push(...credit);
    return verdict;
  }

  /** The withdrawal an instruction digest names, in the state this decision has it in. */
  private withdrawal(digest: string): { op: Operation; state: OperationState } | undefined {
    const ref = this.reads.record(settlementKeys.instruction(digest));
    const op = ref === undefined ? undefined : this.reads.operation(ref);
    if (op === undefined) return undefined;
    return { op, state: this.moves.get(op.ref)?.state ?? op.state };
  }

  private move(op: Operation, state: OperationState, entries: readonly Entry[]): void {
    const before = this.moves.get(op.ref)?.entries ?? [];
    this.moves.set(op.ref, { state, entries: [...before, ...entries] });
    if (state === 'Completed' || state === 'Expired') {
      this.records.push({ key: settlementKeys.pending(instructionOf(op)!.expiry, op.ref), value: null });
      this.records.push({ key: settlementKeys.accountPending((op.command as { account: string }).account, op.ref), value: null });
    }
  }

  private instructed(instruction: SettleBlock['instructions'][number], final: boolean): void {
    const found = this.withdrawal(instruction.digest);
    if (found === undefined || found.op.command.type !== 'withdraw') return;
    const { op, state } = found;
    const cmd = op.command as Extract<Command, { type: 'withdraw' }>;
    const asset = this.reads.asset(cmd.asset);
    // A layer record that disagrees with the instruction the book issued moves nothing: the withdrawal waits, the condition is reported.
    if (instruction.amountMinor !== cmd.amountMinor || asset?.location !== instruction.location || instructionOf(op)?.digest !== instruction.digest) {
      this.condition = 'ERR-AmountMismatch';
      return;
    }
    if (state !== 'Instructed' && state !== 'Submitted') return;
    if (!final) {
      if (state === 'Instructed') this.move(op, 'Submitted', []);
      return;
    }
    this.move(op, 'Completed', pair({ account: cmd.account, layer: 'encumbered' }, { account: settlementAccountId, layer: 'available' }, cmd.asset, cmd.amountMinor, 'withdrawal', 'completed', [op.actor]));
  }

  private expired(digest: string): void {
    const found = this.withdrawal(digest);
    if (found !== undefined) this.expire(found.op, found.state);
  }

  private lapsed(ref: string, finalHeight: number): void {
    const op = this.reads.operation(ref);
    const expiry = op === undefined ? undefined : instructionOf(op)?.expiry;
    if (op !== undefined && expiry !== undefined && expiry <= finalHeight) this.expire(op, this.moves.get(op.ref)?.state ?? op.state);
  }

  private expire(op: Operation, state: OperationState): void {
    if (op.command.type !== 'withdraw' || state !== 'Instructed') return;
    const cmd = op.command;
    this.move(op, 'Expired', pair({ account: cmd.account, layer: 'encumbered' }, { account: cmd.account, layer: 'available' }, cmd.asset, cmd.amountMinor, 'withdrawal', 'returned', [op.actor]));
  }
}
