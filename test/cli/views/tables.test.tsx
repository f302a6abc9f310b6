import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { MovementsTable } from '../../../cli/views/movements.js';
import { StatementView } from '../../../cli/views/statement.js';
import { Table } from '../../../cli/views/table.js';
import { TrialBalanceView } from '../../../cli/views/trial-balance.js';
import { balanced, movement, statement, unbalanced } from './fixtures.js';

const linesOf = (frame: string | undefined) => (frame ?? '').split('\n');

describe('Table', () => {
  it('pads columns to their widest cell and aligns numbers right', () => {
    const { lastFrame } = render(
      <Table
        columns={[
          { header: 'NAME', value: (r: { name: string; n: string }) => r.name },
          { header: 'N', value: (r) => r.n, alignRight: true },
        ]}
        rows={[
          { name: 'a', n: '1' },
          { name: 'longer', n: '1000' },
        ]}
      />,
    );
    expect(linesOf(lastFrame())).toEqual(['NAME       N', 'a          1', 'longer  1000']);
  });

  it('says so when empty', () => {
    expect(render(<Table columns={[]} rows={[]} empty="(nothing)" />).lastFrame()).toBe('(nothing)');
  });
});

describe('TrialBalanceView', () => {
  it('shows each asset and that the book balances', () => {
    const frame = render(<TrialBalanceView trialBalance={balanced} />).lastFrame()!;
    expect(linesOf(frame)[0]).toMatch(/^ASSET\s+DEBITS\s+CREDITS\s+AVAILABLE\s+RESERVED\s+ENCUMBERED\s+SUM\s+BALANCED$/);
    // A daemon that sent no debits and credits: a dash, not a zero.
    expect(frame).toMatch(/USD\s+-\s+-\s+0\s+0\s+0\s+0\s+yes/);
    expect(frame).toContain('balanced (4 accounts; view 42: every figure read at journal position 42');
  });

  it('shows an unbalanced asset', () => {
    const frame = render(<TrialBalanceView trialBalance={unbalanced} />).lastFrame()!;
    expect(frame).toMatch(/USD\s+-\s+-\s+-100\s+0\s+0\s+-100\s+NO/);
    expect(frame).toContain('UNBALANCED: 1 asset(s)');
  });
});

describe('MovementsTable', () => {
  it('shows one row per movement, amounts as the strings they are', () => {
    const frame = render(<MovementsTable movements={[movement(7, '12345678901234567890123')]} />).lastFrame()!;
    const [header, row, more] = linesOf(frame);
    // ink-testing-library's screen is 100 columns: the rest of a row is cut, never wrapped.
    expect(header).toMatch(/^SEQ\s+AT\s+ACCOUNT\s+DIR\s+AMOUNT\s+ASSET\s+LAYER/);
    expect(row).toMatch(/^ {2}7 {2}2026-01-02T03:04:05\.000Z {2}did:ledger:acct:alice {2}credit {2}12345678901234567890123 {2}USD/);
    expect(more).toBeUndefined();
  });

  it('leaves the header out for continuation pages', () => {
    const frame = render(<MovementsTable movements={[movement(8, '1')]} header={false} />).lastFrame()!;
    expect(frame).not.toContain('SEQ');
  });
});

describe('StatementView', () => {
  it('shows the period, opening and closing per layer, and the movements', () => {
    const frame = render(<StatementView statement={statement} />).lastFrame()!.replace(/\s+/g, ' ');
    expect(frame).toContain('did:ledger:acct:alice USD from 2026-01-01T00:00:00.000Z to 2026-02-01T00:00:00.000Z');
    expect(frame).toContain('(entries 3..4, closed)');
    expect(frame).toMatch(/available\s+100\s+340282366920938463463374607431768211455/);
    expect(frame).toMatch(/reserved\s+0\s+5/);
    expect(frame).toContain('3 2026-01-02T03:04:05.000Z did:ledger:acct:alice credit 250 USD');
    expect(frame).toContain('4 2026-01-02T03:04:05.000Z did:ledger:acct:alice debit 10 USD');
  });
});
