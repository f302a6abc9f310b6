/** Movements as a table (`movements`, `statements`). Amounts are shown as the strings they are. */
import type { Movement } from '../api.js';
import { type Column, time } from '../output.js';
import { Table } from './table.js';

export const movementColumns: readonly Column<Movement>[] = [
  { header: 'SEQ', value: (m) => String(m.seq), alignRight: true },
  { header: 'AT', value: (m) => time(m.at) },
  { header: 'ACCOUNT', value: (m) => m.account },
  { header: 'DIR', value: (m) => m.direction },
  { header: 'AMOUNT', value: (m) => m.amount, alignRight: true },
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
}

export function MovementsTable({ movements, header = true }: MovementsTableProps) {
  return <Table columns={movementColumns} rows={movements} empty="(no movements)" header={header} />;
}
