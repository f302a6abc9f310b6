/**
 * The order test files start in: the slowest first, so the two workers end together. On a
 * fresh clone vitest knows no durations and starts larger files first, which put the soak
 * (a small file, one of the longest) near the end, leaving one worker alone for its whole
 * run. So the files that take longest are listed here with what they took (ms, one worker at
 * a time, `--reporter=json` or the default reporter; measured on a busy shared 2-core machine,
 * about 3 times a quiet one's: only their order counts) and start first, longest first; the
 * others follow in vitest's own order (on a second run, its cached durations). Only the order
 * depends on the list: a stale figure costs time, never a test.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const expectedDurationsMs: Readonly<Record<string, number>> = {
  'test/faults/soak.test.ts': 167600,
  'test/kernel/crash.test.ts': 124200,
  'test/daemon/lifecycle.test.ts': 103800,
  'test/daemon/events.test.ts': 92900,
  'test/daemon/backup-trust.test.ts': 86800,
  'test/daemon/postgres/stalls.test.ts': 73900,
  'test/daemon/postgres/failover.test.ts': 54900,
  'test/cli/settlement.process.test.ts': 41200,
  'test/cli/dashboard.tmux.test.ts': 39100,
  'test/kernel/properties.test.ts': 38500,
  'test/cli/accounts.process.test.ts': 33700,
  'test/cli/conventions.process.test.ts': 32100,
  'test/daemon/read-fairness.test.ts': 31200,
  'test/cli/identities.process.test.ts': 28400,
  'test/cli/docs.test.ts': 28000,
  'test/cli/custody.process.test.ts': 28000,
  'test/daemon/backup.test.ts': 27100,
  'test/cli/commands.process.test.ts': 25000,
  'test/cli/waits.process.test.ts': 24900,
  'test/cli/dashboard-sizes.tmux.test.ts': 24400,
  'test/cli/batch.process.test.ts': 23000,
  'test/cli/amounts.process.test.ts': 21100,
  'test/cli/runbook.test.ts': 20200,
  'test/kernel/rounds.property.test.ts': 20100,
  'test/cli/trial-balance.process.test.ts': 19800,
  'test/kernel/genesis-import.test.ts': 19600,
  'test/cli/listings.process.test.ts': 18500,
  'test/cli/ops-listings.process.test.ts': 18100,
  'test/daemon/postgres/snapshot-bounds.test.ts': 18000,
  'test/cli/proposals.process.test.ts': 15800,
  'test/cli/verifiable.process.test.ts': 13300,
  'test/checkpoints/consistency.test.ts': 13200,
};

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const expected = (spec: TestSpecification) => expectedDurationsMs[relative(spec.project.config.root, spec.moduleId)] ?? 0;
    // Stable: files with no figure keep vitest's order among themselves.
    return (await super.sort(files)).sort((a, b) => expected(b) - expected(a));
  }
}
