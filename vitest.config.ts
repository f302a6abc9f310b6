import { defineConfig } from 'vitest/config';
import { SlowestFirst } from './test/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // The JSON report feeds the plain "N passed, N failed" line .ci/run prints.
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // The slowest files start first, so the two workers end together (test/sequencer.ts).
    sequence: { sequencer: SlowestFirst },
  },
});
