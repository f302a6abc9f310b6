/**
 * The derived client key (CONTRACT 4): lowercase hex SHA-256 of the UTF-8 text
 *   principal "\n" METHOD "\n" path "\n" canonical-JSON(body)
 * followed, when the request acts for another identity, by "\n" "on-behalf-of:" identity,
 * and, for a scoped credential, by "\n" "scope:" its accounts sorted and joined by ",".
 * Canonical JSON (src/model/canonical.ts): two bodies that differ only in layout or
 * member order derive the same key.
 *
 * The same text is the request's digest, which a reused client key must match: who
 * acts, and within which scope, is part of what a key is bound to, so a repeat never
 * answers with (or hands out the API key of) an operation made for someone else.
 */
import { canonicalJson } from '../../src/model/canonical.js';
import { sha256Hex } from '../../src/sha256.js';

export { canonicalJson };

/** Who a request acts as: the caller's principal, the identity it acts for (null: itself) and its credential's scope. */
export interface Acting {
  readonly principal: string;
  readonly onBehalfOf: string | null;
  readonly scope?: readonly string[] | null;
}

export function requestDigest(acting: Acting, method: string, path: string, body: unknown): string {
  // Identities and account ids hold no newline, and canonical JSON escapes it: the lines cannot run into each other.
  const behalf = acting.onBehalfOf === null || acting.onBehalfOf === acting.principal ? '' : `\non-behalf-of:${acting.onBehalfOf}`;
  const scope = acting.scope === undefined || acting.scope === null ? '' : `\nscope:${[...acting.scope].sort().join(',')}`;
  const text = `${acting.principal}\n${method.toUpperCase()}\n${path}\n${canonicalJson(body ?? null)}${behalf}${scope}`;
  return sha256Hex(text);
}
