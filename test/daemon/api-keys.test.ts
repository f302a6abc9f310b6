/** The API key handoff (CONTRACT 5): a key waiting for its deciding reply goes out once, in time, or never. */
import { describe, expect, it } from 'vitest';
import { ApiKeyHandoff, handoffKeysMax, handoffWaitMs } from '../../daemon/http/api-keys.js';

describe('ApiKeyHandoff', () => {
  it('gives a held key to the first taker only', () => {
    const handoff = new ApiKeyHandoff(() => 0);
    handoff.hold('op_1', 'ledger_ak_one');
    expect(handoff.take('op_2')).toBeNull();
    expect(handoff.take('op_1')).toBe('ledger_ak_one');
    expect(handoff.take('op_1')).toBeNull();
  });

  it('forgets a key not collected in time', () => {
    let nowMs = 0;
    const handoff = new ApiKeyHandoff(() => nowMs);
    handoff.hold('op_1', 'ledger_ak_one');
    nowMs = handoffWaitMs;
    expect(handoff.take('op_1')).toBeNull();
  });

  it('holds a bounded number of keys, dropping the oldest', () => {
    const handoff = new ApiKeyHandoff(() => 0);
    for (let i = 0; i <= handoffKeysMax; i++) handoff.hold(`op_${i}`, `ledger_ak_${i}`);
    expect(handoff.take('op_0')).toBeNull();
    expect(handoff.take(`op_${handoffKeysMax}`)).toBe(`ledger_ak_${handoffKeysMax}`);
  });
});
