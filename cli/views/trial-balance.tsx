/**
 * The trial balance as an accountant reads it: per asset the debit balances (below zero: the
 * treasuries' issued value) and the credit balances (above zero: value held), each layer, the
 * signed sum, and whether it balances; then, with `--accounts`, a page of per-account lines.
 */
import { Box, Text } from 'ink';
import type { TrialBalance, TrialBalanceLine } from '../api.js';
import { type AmountText, minorUnitsText } from '../money.js';
import { Table } from './table.js';

type Row = TrialBalance['rows'][number];

/** A line's balance in the DEBIT or CREDIT column (its magnitude), the other blank. */
const side = (balanceMinor: string, wanted: 'debit' | 'credit'): string | null => {
  const debit = balanceMinor.startsWith('-');
  if (debit !== (wanted === 'debit') || balanceMinor === '0') return null;
  return debit ? balanceMinor.slice(1) : balanceMinor;
};

export function linesColumns(amount: AmountText) {
  const money = (minor: string | null, asset: string) => (minor === null ? '' : amount(minor, asset));
  return [
    { header: 'ACCOUNT', value: (l: TrialBalanceLine) => l.account },
    { header: 'ASSET', value: (l: TrialBalanceLine) => l.asset },
    { header: 'DEBIT', value: (l: TrialBalanceLine) => money(side(l.balance, 'debit'), l.asset), alignRight: true },
    { header: 'CREDIT', value: (l: TrialBalanceLine) => money(side(l.balance, 'credit'), l.asset), alignRight: true },
    { header: 'AVAILABLE', value: (l: TrialBalanceLine) => amount(l.available, l.asset), alignRight: true },
    { header: 'RESERVED', value: (l: TrialBalanceLine) => amount(l.reserved, l.asset), alignRight: true },
    { header: 'ENCUMBERED', value: (l: TrialBalanceLine) => amount(l.encumbered, l.asset), alignRight: true },
  ];
}

export interface TrialBalanceViewProps {
  trialBalance: TrialBalance;
  amount?: AmountText;
  /** Why the rows carry no debits and credits (the service would not read every balance), if so. */
  grossUnavailable?: string;
}

export function TrialBalanceView({ trialBalance, amount = minorUnitsText, grossUnavailable }: TrialBalanceViewProps) {
  const money = (minor: string | undefined, asset: string) => (minor === undefined ? '-' : amount(minor, asset));
  const lines = trialBalance.accounts_page;
  return (
    <Box flexDirection="column">
      <Table
        columns={[
          { header: 'ASSET', value: (r: Row) => r.asset },
          { header: 'DEBITS', value: (r) => money(r.debits, r.asset), alignRight: true },
          { header: 'CREDITS', value: (r) => money(r.credits, r.asset), alignRight: true },
          { header: 'AVAILABLE', value: (r) => money(r.layers?.available, r.asset), alignRight: true },
          { header: 'RESERVED', value: (r) => money(r.layers?.reserved, r.asset), alignRight: true },
          { header: 'ENCUMBERED', value: (r) => money(r.layers?.encumbered, r.asset), alignRight: true },
          { header: 'SUM', value: (r) => amount(r.openings, r.asset), alignRight: true },
          { header: 'BALANCED', value: (r) => (r.openings === '0' ? 'yes' : 'NO') },
        ]}
        rows={trialBalance.rows}
        empty="(no assets)"
      />
      <BalancedLine trialBalance={trialBalance} />
      <Text dimColor>
        debits: balances below zero (treasuries&apos; issued value); credits: balances above zero; balanced when they are equal, so every layer sums to zero
      </Text>
      {grossUnavailable !== undefined && <Text dimColor>debits and credits not read: {grossUnavailable}</Text>}
      {lines !== undefined && (
        <Box flexDirection="column" marginTop={1}>
          <Table columns={linesColumns(amount)} rows={lines.items} empty="(no balances)" />
          {lines.view !== trialBalance.view && <Text dimColor>lines read at view {lines.view}</Text>}
        </Box>
      )}
    </Box>
  );
}

/** Whether the book balances, over how many accounts, at which view (`explained`: what a view is, in words). */
export function BalancedLine({ trialBalance, explained = true }: { trialBalance: TrialBalance; explained?: boolean }) {
  const view = explained ? `; view ${trialBalance.view}: every figure read at journal position ${trialBalance.view}, one consistent snapshot` : `, view ${trialBalance.view}`;
  return (
    <Text wrap="truncate-end">
      {trialBalance.unbalanced.length === 0 ? <Text color="green">balanced</Text> : <Text color="red">UNBALANCED: {trialBalance.unbalanced.length} asset(s)</Text>}
      <Text dimColor>
        {' '}
        ({trialBalance.accounts} accounts{view})
      </Text>
    </Text>
  );
}
