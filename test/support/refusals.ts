import { Refused } from '../../src/errors.js';

/** The code an edge parser refuses with, or 'accepted'; anything else it throws is a failure. */
export function refusedWith(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof Refused) return e.refusal.error;
    throw e;
  }
  return 'accepted';
}
