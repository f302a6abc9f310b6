/**
 * Test-only hooks for black-box tests of failures no real request can cause. Each is
 * inert unless its environment variable is set, which production never does
 * (docs/daemon.md, "Test hooks").
 *
 * - `LEDGERD_TEST_POISON=<marker>`: deciding a command whose raw `reference` contains
 *   the marker trips an assertion, as a bug tied to that command would.
 * - `LEDGERD_TEST_MIGRATE_PAUSE=<n>`: `ledgerd migrate` stops after its n-th batch written
 *   (1, for a small book, the last: before the verification and the swap), says so on
 *   stderr and waits to be killed (a crash mid-migration, at a known point).
 */
import { fail } from '../src/assert.js';
import type { RoundPart } from '../src/book/kernel.js';

export function poisonHook(env: NodeJS.ProcessEnv): ((part: RoundPart) => void) | undefined {
  const marker = env.LEDGERD_TEST_POISON;
  if (marker === undefined || marker === '') return undefined;
  return (part) => {
    if (part.kind === 'command' && part.op.reference !== null && part.op.reference.includes(marker)) fail(`test poison (LEDGERD_TEST_POISON) in ${part.op.ref}`);
  };
}

export function migratePauseHook(env: NodeJS.ProcessEnv): (() => Promise<void>) | undefined {
  const pauseAt = Number(env.LEDGERD_TEST_MIGRATE_PAUSE ?? '');
  if (!Number.isSafeInteger(pauseAt) || pauseAt < 1) return undefined;
  let written = 0;
  return () => {
    if (++written < pauseAt) return Promise.resolve();
    process.stderr.write('ledgerd migrate: paused (LEDGERD_TEST_MIGRATE_PAUSE)\n');
    // A timer keeps the process alive until the kill; it never fires the resolve.
    return new Promise<void>(() => setInterval(() => {}, 60_000));
  };
}
