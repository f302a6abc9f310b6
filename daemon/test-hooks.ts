/**
 * Test-only hooks for black-box tests of failures no real request can cause. Each is
 * inert unless its environment variable is set, which production never does
 * (docs/daemon.md, "Test hooks").
 *
 * - `LEDGERD_TEST_POISON=<marker>`: deciding a command whose raw `reference` contains
 *   the marker trips an assertion, as a bug tied to that command would.
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
