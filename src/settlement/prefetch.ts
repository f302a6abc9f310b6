/**
 * What a settlement decision reads, for the decider's prefetch: first the records the
 * layer's facts name (deposit records and references, instructions), then the
 * accounts, balances and withdrawals those records name.
 */
import type { Asset, Command, DepositFact, Operation, SettlementCommand } from '../model/model.js';
import type { AccountId, AssetSymbol } from '../model/values.js';
import { settlementAccountId } from './book.js';
import { settlementKeys } from '../model/keys.js';

type Intake = Extract<SettlementCommand, { type: 'bind_asset' | 'settle' | 'observe' }>;

function depositsOf(command: Intake): readonly DepositFact[] {
  if (command.type === 'observe') return [command.deposit];
  if (command.type === 'settle') return command.blocks.flatMap((b) => b.deposits);
  return [];
}

function digestsOf(command: Intake): readonly string[] {
  return command.type === 'settle' ? command.blocks.flatMap((b) => [...b.instructions.map((i) => i.digest), ...b.expired]) : [];
}

/** The records to read first. */
export function settlementNeeds(command: Intake): string[] {
  const deposits = depositsOf(command);
  return [
    ...(command.type === 'settle' ? [settlementKeys.meta] : []),
    ...deposits.flatMap((d) => [settlementKeys.deposit(d.seq), settlementKeys.depositRef(d.accountRef)]),
    ...digestsOf(command).map(settlementKeys.instruction),
  ];
}

export interface FollowUpReads {
  record(key: string): string | undefined;
  assetAt(location: string): Asset | undefined;
  operation(ref: string): Operation | undefined;
}

/** What the records read first name: withdrawals to read, then (once they are read) accounts and balances. */
export function settlementFollowUps(command: Intake, reads: FollowUpReads): { operations: string[]; accounts: AccountId[]; balances: [AccountId, AssetSymbol][] } {
  const operations = [...digestsOf(command).flatMap((digest) => reads.record(settlementKeys.instruction(digest)) ?? []), ...(command.type === 'settle' ? command.due : [])];
  const accounts: AccountId[] = [settlementAccountId];
  const balances: [AccountId, AssetSymbol][] = [];
  for (const deposit of depositsOf(command)) {
    const account = reads.record(settlementKeys.depositRef(deposit.accountRef)) as AccountId | undefined;
    const asset = reads.assetAt(deposit.location);
    if (account !== undefined) accounts.push(account);
    if (account !== undefined && asset !== undefined) balances.push([account, asset.id], [settlementAccountId, asset.id]);
  }
  for (const ref of operations) {
    const command: Command | undefined = reads.operation(ref)?.command;
    if (command?.type !== 'withdraw') continue;
    accounts.push(command.account);
    balances.push([command.account, command.asset], [settlementAccountId, command.asset]);
  }
  return { operations, accounts, balances };
}
