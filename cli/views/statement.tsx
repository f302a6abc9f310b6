/** A statement: the period, opening and closing balances per layer, and the movements between. */
import { Box, Text } from 'ink';
import type { Balances, Statement } from '../api.js';
import { time } from '../output.js';
import { type AmountText, minorUnitsText } from '../money.js';
import { safe } from '../safe.js';
import { MovementsTable } from './movements.js';
import { Table } from './table.js';

const layers = ['available', 'reserved', 'encumbered'] as const;

export function StatementView({ statement, amount = minorUnitsText }: { statement: Statement; amount?: AmountText }) {
  const shown = (minor: string) => amount(minor, statement.asset);
  const balances = layers.map((layer) => ({ layer, opening: statement.opening[layer], closing: statement.closing[layer] }));
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>{safe(statement.account)}</Text> {safe(statement.asset)} from {time(statement.from)} to {time(statement.to)}{' '}
        <Text dimColor>
          (entries {statement.from_seq}..{statement.to_seq}, {statement.closed ? 'closed' : 'open: postings may still enter'})
        </Text>
      </Text>
      <Box marginY={1}>
        <Table
          columns={[
            { header: 'LAYER', value: (b: { layer: keyof Balances; opening: string; closing: string }) => b.layer },
            { header: 'OPENING', value: (b) => shown(b.opening), alignRight: true },
            { header: 'CLOSING', value: (b) => shown(b.closing), alignRight: true },
          ]}
          rows={balances}
        />
      </Box>
      <MovementsTable movements={statement.movements} amount={amount} />
    </Box>
  );
}
