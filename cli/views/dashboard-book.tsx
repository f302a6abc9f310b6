/**
 * The dashboard's trial-balance pane: per asset what is issued (the operator's treasury accounts
 * below zero), what customers hold available (the book's available layer less the treasuries),
 * what is reserved and encumbered (the book's layers, from the totals ledgerd keeps), the sum,
 * and whether it balances.
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
  /** The book's layers; null from a daemon that does not serve them. */
  layers: { available: bigint; reserved: bigint; encumbered: bigint } | null;
}

const rowsOf = (trialBalance: TrialBalance, treasuries: DashboardState['treasuries']): Row[] =>
  trialBalance.rows.map((r) => ({
    asset: r.asset,
    sumMinor: BigInt(r.openings),
    treasuryMinor: treasuries === null ? null : (treasuries.byAsset.get(r.asset) ?? 0n),
    layers: r.layers === undefined ? null : { available: BigInt(r.layers.available), reserved: BigInt(r.layers.reserved), encumbered: BigInt(r.layers.encumbered) },
  }));

/** Customers' available value: the book's available layer less what the treasuries hold (every layer: they rarely reserve). */
const heldMinor = (r: Row): bigint | null => (r.treasuryMinor === null || r.layers === null ? null : r.layers.available - r.treasuryMinor);

export function BookPane({ state, amount, wide = true }: { state: DashboardState; amount: AmountText; wide?: boolean }) {
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
          { header: 'HELD', value: (r) => money(heldMinor(r), r.asset), alignRight: true },
          { header: 'RESERVED', value: (r) => money(r.layers?.reserved ?? null, r.asset), alignRight: true },
          { header: 'ENCUMBERED', value: (r) => money(r.layers?.encumbered ?? null, r.asset), alignRight: true },
          { header: 'SUM', value: (r) => money(r.sumMinor, r.asset), alignRight: true },
          { header: 'BALANCED', value: (r) => (r.sumMinor === 0n ? 'yes' : 'NO') },
        ]}
        rows={rowsOf(trialBalance, state.treasuries)}
        empty="(no assets)"
      />
      <BalancedLine trialBalance={trialBalance} explained={wide} />
      <Text dimColor wrap="truncate-end">
        {wide ? (
          <>
            issued: the operator&apos;s {state.treasuries === null ? '' : `${state.treasuries.accounts} `}treasuries below zero · held: customers&apos; available · reserved,
            encumbered: the book&apos;s layers
          </>
        ) : (
          "issued: treasuries below zero · held: customers' available"
        )}
      </Text>
    </Box>
  );
}
