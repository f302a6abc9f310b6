/**
 * The dashboard's trial-balance pane: per asset what is issued (the operator's treasury accounts
 * below zero), what customers hold (the book's sum less the treasuries, every layer), the sum, and
 * whether it balances. ledgerd serves no book-wide total per layer: held, reserved and encumbered
 * apart would need every account read, so the pane says so rather than show a guess.
 */
import { Box, Text } from 'ink';
import type { TrialBalance } from '../api.js';
import type { DashboardState } from '../dashboard/model.js';
import type { AmountText } from '../money.js';
import { safe } from '../safe.js';
import { Table } from './table.js';
import { BalancedLine } from './trial-balance.js';

interface Row {
  asset: string;
  sumMinor: bigint;
  treasuryMinor: bigint | null;
}

const rowsOf = (trialBalance: TrialBalance, treasuries: DashboardState['treasuries']): Row[] =>
  trialBalance.rows.map((r) => ({ asset: r.asset, sumMinor: BigInt(r.openings), treasuryMinor: treasuries === null ? null : (treasuries.byAsset.get(r.asset) ?? 0n) }));

export function BookPane({ state, amount }: { state: DashboardState; amount: AmountText }) {
  if (state.trialBalanceError !== null) return <Text color="red">{safe(state.trialBalanceError)}</Text>;
  const trialBalance = state.trialBalance;
  if (trialBalance === null) return <Text dimColor>loading…</Text>;
  const money = (minor: bigint | null, asset: string) => (minor === null ? '…' : amount(minor.toString(), asset));
  return (
    <Box flexDirection="column">
      <Table
        columns={[
          { header: 'ASSET', value: (r: Row) => r.asset },
          { header: 'ISSUED', value: (r) => money(r.treasuryMinor === null ? null : -r.treasuryMinor, r.asset), alignRight: true },
          { header: 'CUSTOMERS HOLD', value: (r) => money(r.treasuryMinor === null ? null : r.sumMinor - r.treasuryMinor, r.asset), alignRight: true },
          { header: 'SUM', value: (r) => money(r.sumMinor, r.asset), alignRight: true },
          { header: 'BALANCED', value: (r) => (r.sumMinor === 0n ? 'yes' : 'NO') },
        ]}
        rows={rowsOf(trialBalance, state.treasuries)}
        empty="(no assets)"
      />
      <BalancedLine trialBalance={trialBalance} />
      <Text dimColor wrap="truncate-end">
        issued: the operator&apos;s {state.treasuries === null ? '' : `${state.treasuries.accounts} `}treasury accounts below zero · customers hold: the sum less them, every layer
      </Text>
      <Text dimColor wrap="truncate-end">held, reserved and encumbered apart: not served by ledgerd (they need every account read)</Text>
    </Box>
  );
}
