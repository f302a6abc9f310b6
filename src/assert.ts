/**
 * Assertions for invariants. A failed assertion is a bug, never an operating error:
 * it throws an AssertionFailure that the daemon treats as fatal (it stops rather than
 * serve a book it can no longer vouch for).
 */
export class AssertionFailure extends Error {
  override name = 'AssertionFailure';
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionFailure(`assertion failed: ${message}`);
}

/**
 * For hot paths: `if (!condition) fail(\`...\`)` builds its message only when it
 * fails, where `assert(condition, \`...\`)` would build it on every call.
 */
export function fail(message: string): never {
  throw new AssertionFailure(`assertion failed: ${message}`);
}

export function unreachable(value: never, message = 'unreachable'): never {
  throw new AssertionFailure(`${message}: ${String(value)}`);
}
