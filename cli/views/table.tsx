/**
 * A table for people: bold headers, columns as wide as their widest cell, numbers to the right.
 * Rows never wrap (a wrapped row reads as two); past the screen's width they are cut.
 */
import { Box, Text } from 'ink';
import { type Column, cellsOf, columnWidths } from '../output.js';

export interface TableProps<Row> {
  columns: readonly Column<Row>[];
  rows: readonly Row[];
  /** Shown instead of an empty table. */
  empty?: string;
  header?: boolean;
  /** The row shown inverse (a cursor), if any. */
  selected?: number;
}

export function Table<Row>({ columns, rows, empty = '(none)', header = true, selected }: TableProps<Row>) {
  if (rows.length === 0) return <Text dimColor>{empty}</Text>;
  const cells = cellsOf(columns, rows);
  const widths = columnWidths(columns, cells);
  const pad = (value: string, i: number) => (columns[i]!.alignRight ? value.padStart(widths[i]!) : value.padEnd(widths[i]!));
  return (
    <Box flexDirection="column">
      {header && <Text bold wrap="truncate-end">{columns.map((c, i) => pad(c.header, i)).join('  ').trimEnd()}</Text>}
      {cells.map((row, r) => (
        <Text key={r} wrap="truncate-end" inverse={r === selected}>
          {row.map(pad).join('  ').trimEnd()}
        </Text>
      ))}
    </Box>
  );
}
