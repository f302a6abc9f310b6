/** Movements as a table (`movements`, `statements`), amounts as `amount` shows them. */
import type { Movement } from '../api.js';
import { type AmountText, minorUnitsText } from '../money.js';
import { type Column, time } from '../output.js';
import { Table } from './table.js';

export const movementColumns = (amount: AmountText = minorUnitsText): readonly Column<Movement>[] => [
  { header: 'SEQ', value: (m) => String(m.seq), alignRight: true },
  { header: 'AT', value: (m) => time(m.at) },
  { header: 'ACCOUNT', value: (m) => m.account },
  { header: 'DIR', value: (m) => m.direction },
  { header: 'AMOUNT', value: (m) => amount(m.amount, m.asset), alignRight: true },
  { header: 'ASSET', value: (m) => m.asset },
  { header: 'LAYER', value: (m) => m.balance },
  { header: 'STATUS', value: (m) => m.status },
  { header: 'KIND', value: (m) => m.kind },
  { header: 'COUNTERPARTY', value: (m) => m.counterparty ?? '-' },
  { header: 'OPERATION', value: (m) => m.operation },
];

export interface MovementsTableProps {
  movements: readonly Movement[];
  header?: boolean;
  amount?: AmountText;
}

export function MovementsTable({ movements, header = true, amount }: MovementsTableProps) {
  return <Table columns={movementColumns(amount)} rows={movements} empty="(no movements)" header={header} />;
}
