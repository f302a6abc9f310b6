/** The trial balance: the signed sum of openings per asset, and whether the book balances. */
import { Box, Text } from 'ink';
import type { TrialBalance } from '../api.js';
import { type AmountText, minorUnitsText } from '../money.js';
import { Table } from './table.js';

type Row = TrialBalance['rows'][number];

export function TrialBalanceView({ trialBalance, amount = minorUnitsText }: { trialBalance: TrialBalance; amount?: AmountText }) {
  return (
    <Box flexDirection="column">
      <Table
        columns={[
          { header: 'ASSET', value: (r: Row) => r.asset },
          { header: 'OPENINGS', value: (r) => amount(r.openings, r.asset), alignRight: true },
          { header: 'BALANCED', value: (r) => (r.openings === '0' ? 'yes' : 'NO') },
        ]}
        rows={trialBalance.rows}
        empty="(no assets)"
      />
      <BalancedLine trialBalance={trialBalance} />
    </Box>
  );
}

/** Whether the book balances, over how many accounts, at which view. */
export function BalancedLine({ trialBalance }: { trialBalance: TrialBalance }) {
  return (
    <Text>
      {trialBalance.unbalanced.length === 0 ? <Text color="green">balanced</Text> : <Text color="red">UNBALANCED: {trialBalance.unbalanced.length} asset(s)</Text>}
      <Text dimColor>
        {' '}
        ({trialBalance.accounts} accounts, view {trialBalance.view})
      </Text>
    </Text>
  );
}
