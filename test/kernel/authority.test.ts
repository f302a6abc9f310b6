/** Who sees an operation: its submitter (within the credential's scope) and the operator. */
import { describe, expect, it } from 'vitest';
import { type Actor, builtInPrincipals, operationVisible } from '../../src/auth/authority.js';
import type { Command, Operation } from '../../src/model/model.js';
import type { AccountId, CredentialId, IdentityId } from '../../src/model/values.js';
import { transfer } from '../support/book.js';

const alice = 'did:ledger:id:alice' as IdentityId;
const a1 = 'did:ledger:acct:a1' as AccountId;
const a2 = 'did:ledger:acct:a2' as AccountId;
const caller = (scope: AccountId[] | null, principal: IdentityId = alice): Actor => ({ principal, credential: 'did:ledger:cred:x' as CredentialId, onBehalfOf: null, scope });

function op(command: Command, scope: AccountId[] | null): Operation {
  return {
    ref: 'op_0000000000000001',
    cseq: 1,
    command,
    actor: { principal: alice, credential: 'did:ledger:cred:c' as CredentialId, onBehalfOf: null, grant: null, kind: 'owner' },
    scope,
    state: 'Completed',
    submittedAtMs: 0,
    decidedAtMs: 0,
    clientKey: 'k',
    clientKeyDerived: false,
    reference: null,
    result: null,
    error: null,
    hold: null,
  };
}

describe('operation visibility', () => {
  const fromA1 = op(transfer(a1, 'did:ledger:acct:bob', 5n), null);
  const fromA2 = op(transfer(a2, 'did:ledger:acct:bob', 5n), null);

  it('shows an operation to its principal unscoped, and to the operator, and to no one else', () => {
    expect(operationVisible(fromA2, caller(null), builtInPrincipals)).toBe(true);
    expect(operationVisible(fromA2, caller(null, builtInPrincipals.operator), builtInPrincipals)).toBe(true);
    expect(operationVisible(fromA2, caller(null, 'did:ledger:id:bob' as IdentityId), builtInPrincipals)).toBe(false);
    expect(operationVisible(fromA2, caller(null, builtInPrincipals.identities), builtInPrincipals)).toBe(false);
  });

  it('shows a scoped credential only what it could have submitted', () => {
    expect(operationVisible(fromA1, caller([a1]), builtInPrincipals)).toBe(true);
    expect(operationVisible(fromA2, caller([a1]), builtInPrincipals)).toBe(false);
    // Nothing debited: visible when it was submitted under a scope within the caller's.
    const opened = (scope: AccountId[] | null) => op({ type: 'open_account', owner: alice, kind: 'customer', custody: 'delegated', treasuryLimits: {} }, scope);
    expect(operationVisible(opened([a1]), caller([a1, a2]), builtInPrincipals)).toBe(true);
    expect(operationVisible(opened(null), caller([a1]), builtInPrincipals)).toBe(false);
    expect(operationVisible(opened([a2]), caller([a1]), builtInPrincipals)).toBe(false);
  });
});
