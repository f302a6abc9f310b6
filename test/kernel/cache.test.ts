import { describe, expect, it } from 'vitest';
import { GenerationalCache } from '../../src/book/cache.js';

describe('the decider\'s read cache', () => {
  it('holds at most its capacity, keeps what is used, and drops what is not used for a capacity of entries', () => {
    const capacity = 1024;
    const cache = new GenerationalCache<number>(capacity);
    cache.set('hot', -1);
    cache.set('cold', -2);
    for (let i = 0; i < capacity * 5; i++) {
      cache.set(`k${i}`, i);
      expect(cache.get('hot')).toBe(-1);
      expect(cache.size).toBeLessThanOrEqual(capacity);
    }
    expect(cache.get('cold')).toBeUndefined();
    expect(cache.get(`k${capacity * 5 - 1}`)).toBe(capacity * 5 - 1);
    // A value set again replaces the one held, in either generation.
    cache.set('hot', 7);
    expect(cache.get('hot')).toBe(7);
    cache.delete('hot');
    expect(cache.get('hot')).toBeUndefined();
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it('keeps an entry read in the old generation (moved young), as the decider re-reads a busy account', () => {
    const cache = new GenerationalCache<string>(8);
    cache.set('a', 'A');
    for (const k of ['b', 'c', 'd']) cache.set(k, k); // the young generation (4) fills: a..d become old
    expect(cache.get('a')).toBe('A'); // moved young
    for (const k of ['e', 'f', 'g']) cache.set(k, k); // young fills again (a, e, f, g): b..d are dropped
    expect(cache.get('a')).toBe('A');
    expect(cache.get('b')).toBeUndefined();
    expect(cache.size).toBeLessThanOrEqual(8);
  });
});
