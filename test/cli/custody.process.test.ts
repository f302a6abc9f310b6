/**
 * Custody with the built `ledgerctl` against a real `ledgerd` (issue 11, the runbook in
 * README.md): an identity's recovery terms, an account reclaimed end to end with the
 * profile's key and with its software passkey, a succession opened and cancelled, freeze,
 * close and restriction. Profiles only: `--profile` decides who acts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { configDir, ledgerctl, withoutClientKey } from './support/ledgerctl.js';
import { useBook } from './support/use-book.js';

const book = useBook();
let env: Record<string, string> = {};
const run = (...args: string[]) => ledgerctl(args, env);
async function ok(...args: string[]) {
  const r = await run(...args);
  expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
  return r;
}

/** An identity with an API-key profile of its own name, and an account saved as `savings` in it. */
async function holder(name: string): Promise<{ identity: string; account: string }> {
  const identity = (await ok('--profile', 'identities', 'identities', 'create', '--scheme', 'api-key', '--save-as', name)).json().result.identity as string;
  const account = (await ok('--profile', name, 'accounts', 'open', '--owner', identity, '--save-as', 'savings')).json().result.account as string;
  return { identity, account };
}

beforeAll(async () => {
  env = { LEDGERCTL_CONFIG_DIR: configDir() };
  await ledgerctl(['profile', 'add', 'operator', '--url', book.daemon.url, '--token', book.daemon.operatorKey, '--use'], env);
  await ledgerctl(['profile', 'add', 'identities', '--url', book.daemon.url, '--token', book.daemon.identitiesKey], env);
});

describe('reclaiming custody (ledgerctl accounts reclaim)', () => {
  it('reclaims an account end to end with the profile\'s key, once the mechanisms are acknowledged', async () => {
    const { identity, account } = await holder('carol');
    const terms = (await ok('--profile', 'carol', 'identities', 'recovery-terms', identity)).json();
    expect(terms).toMatchObject({ identity, digest: expect.stringMatching(/^[0-9a-f]{64}$/), mechanisms: [{ mechanism: 'recovery_authority', authority: 'did:ledger:id:identities' }] });
    const mechanisms = (await ok('--profile', 'carol', 'accounts', 'recovery-mechanisms', 'savings')).json();
    expect(mechanisms.digest).toBe(terms.digest);
    await ok('--profile', 'carol', 'credentials', 'register', '--scheme', 'key');
    // Off a terminal an acknowledgement is never implied: usage error, nothing sent.
    const unasked = await run('--profile', 'carol', 'accounts', 'reclaim', 'savings');
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain('--yes');
    expect((await ok('--profile', 'carol', 'accounts', 'custody', 'savings')).json()).toMatchObject({ custody: 'delegated', epoch: 0 });
    const reclaimed = (await ok('--profile', 'carol', 'accounts', 'reclaim', 'savings', '--yes', '--client-key', 'reclaim-carol')).json();
    expect(reclaimed).toMatchObject({ command: 'reclaim', state: 'Completed' });
    expect((await ok('--profile', 'carol', 'accounts', 'custody', 'savings')).json()).toMatchObject({ account, custody: 'owned', epoch: 1, owner: identity });
    // A retry under the client key is the same operation; a second reclaim is refused (exit 1).
    expect((await ok('--profile', 'carol', 'accounts', 'reclaim', 'savings', '--yes', '--client-key', 'reclaim-carol')).json().operation_reference).toBe(reclaimed.operation_reference);
    const again = await run('--profile', 'carol', 'accounts', 'reclaim', 'savings', '--yes');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/ERR-InvalidTransition/);
    // The operator's authority stops at the owned account.
    const debit = await run('--profile', 'operator', 'transfers', 'create', '--from', account, '--to', 'did:ledger:acct:bob', '--amount', '1', '--asset', 'USD');
    expect(debit.code).toBe(1);
    // The refusal says custody is why.
    expect(withoutClientKey(debit.stderr)).toBe(`ERR-NotAuthorised: owned custody: the operator cannot debit account ${account}; only its owner, or a grant its owner gave, can\n`);
  });

  it('reclaims with the profile\'s software passkey', async () => {
    await holder('erin');
    await ok('--profile', 'erin', 'credentials', 'register', '--scheme', 'webauthn-es256');
    expect((await ok('--profile', 'erin', 'accounts', 'reclaim', 'savings', '--yes')).json()).toMatchObject({ command: 'reclaim', state: 'Completed' });
    expect((await ok('--profile', 'erin', 'accounts', 'custody', 'savings')).json()).toMatchObject({ custody: 'owned', epoch: 1 });
  });

  it('says what is missing when the profile holds no key or passkey (exit 2)', async () => {
    await holder('frank');
    const r = await run('--profile', 'frank', 'accounts', 'reclaim', 'savings', '--yes');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/holds no key or registered passkey/);
  });
});

describe('custody changes and the lifecycle', () => {
  it('opens and cancels a succession, freezes, unfreezes, closes and restricts', async () => {
    const { identity, account } = await holder('gina');
    const heir = (await ok('--profile', 'identities', 'identities', 'create', '--scheme', 'api-key', '--save-as', 'heir')).json().result.identity as string;
    const opened = (await ok('--profile', 'gina', 'custody', 'changes', 'open', 'savings', '--kind', 'succession', '--new-owner', heir)).json();
    expect(opened.result).toMatchObject({ pending: opened.operation_reference, effective_at: expect.any(Number) });
    expect((await ok('--profile', 'gina', 'accounts', 'custody', 'savings')).json()).toMatchObject({ successor: heir, changes: [{ state: 'pending', kind: 'succession' }] });
    // The new owner accepts a succession (CONTRACT 8); the owner who opened it cannot complete it.
    const byOwner = await run('--profile', 'gina', 'custody', 'changes', 'complete', 'savings', opened.operation_reference);
    expect(byOwner.code).toBe(1);
    expect(byOwner.stderr).toMatch(/ERR-NotAuthorised/);
    const early = await run('--profile', 'heir', 'custody', 'changes', 'accept', account, opened.operation_reference);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/ERR-RecoveryNotElapsed/);
    await ok('--profile', 'gina', 'custody', 'changes', 'cancel', 'savings', opened.operation_reference);
    expect((await ok('--profile', 'gina', 'accounts', 'custody', 'savings')).json()).toMatchObject({ successor: null, changes: [{ state: 'cancelled' }] });

    expect((await run('--profile', 'operator', 'accounts', 'freeze', account)).code).toBe(2);
    await ok('--profile', 'operator', 'accounts', 'freeze', account, '--justification', 'case 12');
    expect((await ok('--profile', 'gina', 'accounts', 'show', 'savings')).json().status).toBe('frozen');
    await ok('--profile', 'operator', 'accounts', 'unfreeze', account, '--justification', 'case 12 closed');
    await ok('--profile', 'gina', 'accounts', 'close', 'savings');
    expect((await ok('--profile', 'gina', 'accounts', 'show', 'savings')).json()).toMatchObject({ status: 'closed', closed: true });

    await ok('--profile', 'operator', 'ops', 'identities', 'restrict', identity, '--justification', 'screening');
    const restricted = await run('--profile', 'gina', 'accounts', 'open', '--owner', identity);
    expect(restricted.code).toBe(1);
    expect(restricted.stderr).toMatch(/ERR-IdentityRestricted/);
    await ok('--profile', 'operator', 'ops', 'identities', 'unrestrict', identity, '--justification', 'cleared');
    await ok('--profile', 'gina', 'accounts', 'open', '--owner', identity);
  });
});
