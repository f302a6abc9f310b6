import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // The JSON report feeds the plain "N passed, N failed" line .ci/run prints.
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
