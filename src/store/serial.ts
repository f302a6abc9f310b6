/**
 * Changes over a store applied one at a time, in call order, by a keeper of state
 * outside the kernel's rounds (the settlement layer, checkpoints). A store that fails
 * under a change is an operating error: the change is refused with the keeper's code,
 * and its state is read back from the store before the next change, since a write
 * reported failed may still have landed. Refusals and assertion failures pass as they are.
 */
import { AssertionFailure } from '../assert.js';
import { type ErrorCode, Refused, refuse } from '../errors.js';

export class SerialChanges {
  private tail: Promise<unknown> = Promise.resolve();
  private stale = false;

  constructor(
    private readonly reload: () => Promise<void>,
    private readonly failure: { readonly code: ErrorCode; readonly what: string },
  ) {}

  run<T>(change: () => Promise<T>): Promise<T> {
    const guarded = async (): Promise<T> => {
      try {
        if (this.stale) {
          await this.reload();
          this.stale = false;
        }
        return await change();
      } catch (error) {
        if (error instanceof Refused || error instanceof AssertionFailure) throw error;
        this.stale = true;
        refuse(this.failure.code, `${this.failure.what}: ${(error as Error).message}`);
      }
    };
    const run = this.tail.then(guarded, guarded);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
