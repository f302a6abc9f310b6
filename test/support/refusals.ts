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

/** The code a submission (or any promise) is refused with, or 'accepted'. */
export async function submittedWith(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Refused) return e.refusal.error;
    throw e;
  }
  return 'accepted';
}
