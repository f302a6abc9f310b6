import { describe, expect, it } from 'vitest';
import { amountMinorMax } from '../../src/constants.js';
import { withinAmountCeiling } from '../../src/model/model.js';

/** The ceiling as CONTRACT 3 states it: each layer and their sum at most 2^128 - 1 either side of zero. */
const inRange = (v: bigint) => v <= amountMinorMax && v >= -amountMinorMax;
const stated = (a: bigint, r: bigint, e: bigint) => inRange(a) && inRange(r) && inRange(e) && inRange(a + r + e);

describe('the amount ceiling on a balance', () => {
  it('answers as stated for layers around a third of the ceiling, the ceiling and past it, either sign', () => {
    const third = amountMinorMax / 3n;
    const magnitudes = [0n, 1n, third - 1n, third, third + 1n, 2n * third, amountMinorMax - 1n, amountMinorMax, amountMinorMax + 1n];
    const values = magnitudes.flatMap((m) => [m, -m]);
    let refused = 0;
    for (const a of values) {
      for (const r of values) {
        for (const e of values) {
          const want = stated(a, r, e);
          expect(withinAmountCeiling({ available: a, reserved: r, encumbered: e }), `${a} ${r} ${e}`).toBe(want);
          if (!want) refused++;
        }
      }
    }
    // Both answers were met (sums past the ceiling of layers each within it among the refusals).
    expect(refused).toBeGreaterThan(0);
  });
});
