/**
 * Adding a member by a proposal (CONTRACT 13, docs/governance.md) with the built `ledgerctl`
 * against a real `ledgerd`: once a second admin exists a direct add is refused
 * ERR-ApprovalRequired; the member-to-be makes its own passkey (`ops members prepare`), an admin
 * proposes it (`ops members add --credential-file --propose`), the other admin approves, and the
 * new member signs in with the passkey no one else held and reads as an auditor. A proposal with
 * a secret made by the proposer is refused before anything is sent. A legal disclosure and the
 * approval policy (`ops policy set`), covered by default, go by proposals too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accounts } from './support/book.js';
import { configDir, ledgerctl } from './support/ledgerctl.js';
import { useBook } from './support/use-book.js';

const book = useBook();

describe('ops members add --propose', () => {
  it("adds a member by a proposal with the member's own passkey; the member then signs in and reads", async () => {
    // Root alone adds the second admin directly (no one could approve it yet).
    const ada = await ledgerctl(['ops', 'members', 'add', 'ada', '--role', 'admin', '--scheme', 'api-key', '--json'], book.env);
    expect(ada.code, ada.stderr).toBe(0);
    const asAda = { ...book.env, LEDGER_TOKEN: ada.json().api_key };

    const direct = await ledgerctl(['ops', 'members', 'add', 'eve', '--role', 'auditor', '--scheme', 'api-key'], book.env);
    expect(direct.code).toBe(1);
    expect(direct.stderr).toMatch(/^ERR-ApprovalRequired: .*members/m);
    // A secret made on the proposer's machine would be the proposer's: refused before anything is sent.
    const madeHere = await ledgerctl(['ops', 'members', 'add', 'eve', '--role', 'auditor', '--scheme', 'webauthn-es256', '--propose', '--justification', 'x'], book.env);
    expect(madeHere.code).toBe(2);
    expect(madeHere.stderr).toContain('ops members prepare');
    // No scheme named: the shared default (a reclaim-only key) would make a member who can never sign in.
    const noScheme = await ledgerctl(['ops', 'members', 'add', 'eve', '--role', 'auditor'], book.env);
    expect(noScheme.code).toBe(2);
    expect(noScheme.stderr).toContain('--scheme webauthn-es256');

    // Carol, on her own machine (her own profile directory), makes her passkey; only its public part leaves.
    const carolDir = configDir();
    const carol = { LEDGERCTL_CONFIG_DIR: carolDir };
    expect((await ledgerctl(['profile', 'add', 'carol', '--url', book.daemon.url, '--use'], carol)).code).toBe(0);
    const file = join(carolDir, 'carol-credential.json');
    const prepared = await ledgerctl(['ops', 'members', 'prepare', '--out', file], carol);
    expect(prepared.code, prepared.stderr).toBe(0);
    const handed = JSON.parse(readFileSync(file, 'utf8'));
    expect(Object.keys(handed).sort()).toEqual(['passkey', 'scheme']);
    expect(handed.scheme).toBe('webauthn-es256');
    expect(JSON.stringify(handed)).not.toContain('PRIVATE KEY');

    const proposed = await ledgerctl(['ops', 'members', 'add', 'carol', '--role', 'auditor', '--credential-file', file, '--propose', '--justification', 'new auditor, ticket 7', '--json'], book.env);
    expect(proposed.code, proposed.stderr).toBe(0);
    const id = proposed.json().result.proposal as string;
    expect((await ledgerctl(['ops', 'proposals', 'show', id, '--json'], book.env)).json()).toMatchObject({ state: 'open', proposer: 'root', request: { path: '/v1/ops/members', body: { name: 'carol', role: 'auditor', scheme: 'webauthn-es256' } } });
    // Nothing added until approved: carol cannot sign in yet.
    expect((await ledgerctl(['ops', 'members', 'list', '--json'], book.env)).json().items.map((m: { name: string }) => m.name)).toEqual(['ada', 'root']);

    const approved = await ledgerctl(['ops', 'proposals', 'approve', id, '--yes', '--json'], asAda);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.json()).toMatchObject({ state: 'Completed', command: 'register_credential' });
    expect(approved.json().api_key ?? null).toBeNull();
    const credential = approved.json().result.credential as string;
    const listed = (await ledgerctl(['ops', 'members', 'list', '--json'], book.env)).json().items;
    expect(listed.find((m: { name: string }) => m.name === 'carol')).toMatchObject({ credential, role: 'auditor', scheme: 'webauthn-es256', added_by: 'root' });

    // Carol signs in with the passkey only she held, and reads as an auditor; she commands nothing.
    const login = await ledgerctl(['auth', 'login', '--credential', credential, '--json'], carol);
    expect(login.code, login.stderr).toBe(0);
    expect(login.json()).toMatchObject({ principal: 'did:ledger:id:operator', credential });
    const read = await ledgerctl(['ops', 'audit', '--member', 'carol', '--json'], carol);
    expect(read.code, read.stderr).toBe(0);
    const trail = (await ledgerctl(['ops', 'audit', '--all', '--json'], carol)).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(trail.find((i: { act: string; proposal?: string }) => i.act === 'addMember' && i.proposal === id)).toMatchObject({ member: 'root', approval: 'ada', justification: 'new auditor, ticket 7' });
    expect(trail.at(-1)).toMatchObject({ act: 'sign_in', member: 'carol', credential });
    const command = await ledgerctl(['accounts', 'freeze', accounts.bob, '--justification', 'no'], carol);
    expect(command.code).toBe(1);
    expect(command.stderr).toMatch(/^ERR-NotAuthorised: /m);
    // The credential is kept in her profile: the next sign-in needs no --credential.
    expect((await ledgerctl(['auth', 'login'], carol)).code).toBe(0);
    // Role changes and removals go the same way: directly refused, proposed, approved.
    const promote = ['ops', 'members', 'role', credential, '--role', 'operator'];
    expect((await ledgerctl(promote, book.env)).stderr).toMatch(/^ERR-ApprovalRequired: /m);
    const promotion = (await ledgerctl([...promote, '--propose', '--justification', 'carol moves to payments', '--json'], book.env)).json().result.proposal;
    expect((await ledgerctl(['ops', 'proposals', 'approve', promotion, '--yes'], asAda)).code).toBe(0);
    expect((await ledgerctl(['ops', 'members', 'list', '--json'], carol)).json().items.find((m: { name: string }) => m.name === 'carol').role).toBe('operator');
    asAdaToken = asAda.LEDGER_TOKEN;
  });

  it('proposes a legal disclosure (covered by default) and the approval makes it', async () => {
    const created = await ledgerctl(['checkpoints', 'create', '--field', 'result.anchoring.checkpoint.number'], book.env);
    expect(created.code, created.stderr).toBe(0);
    expect((await ledgerctl(['checkpoints', 'wait', created.stdout.trim(), '--timeout-ms', '20000'], book.env)).code).toBe(0);
    const disclose = ['disclosures', 'create', '--subject', accounts.alice, '--assertion', JSON.stringify({ shape: 'holds_at_least', amount: '1', asset: 'USD', kind: 'available' }), '--legal-obligation', 'court order 12', '--recipient-reference', 'ab'.repeat(32)];
    const direct = await ledgerctl(disclose, book.env);
    expect(direct.code).toBe(1);
    expect(direct.stderr).toMatch(/^ERR-ApprovalRequired: .*legal_disclosure/m);
    const proposed = await ledgerctl([...disclose, '--propose', '--justification', 'order served today', '--json'], book.env);
    expect(proposed.code, proposed.stderr).toBe(0);
    const id = proposed.json().result.proposal as string;
    const approved = await ledgerctl(['ops', 'proposals', 'approve', id, '--yes', '--json'], { ...book.env, LEDGER_TOKEN: asAdaToken });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.json().result.disclosure).toMatch(/^[0-9a-f]+$/);
    const shown = await ledgerctl(['disclosures', 'show', approved.json().result.disclosure], {});
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.json()).toMatchObject({ subject: accounts.alice });
  });
});

describe('ops policy', () => {
  it('shows the policy; a change goes by a proposal and keeps what it does not name', async () => {
    const shown = await ledgerctl(['ops', 'policy', 'show', '--json'], book.env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.json()).toEqual({ rules: ['members', 'policy', 'backup', 'legal_disclosure'], issuanceAboveMinor: {}, ttlMs: 86_400_000 });
    const set = ['ops', 'policy', 'set', '--rules', 'members,policy,legal_disclosure,issuance_above', '--issuance-above', 'USD=1000'];
    expect((await ledgerctl(set, book.env)).stderr).toMatch(/^ERR-ApprovalRequired: .*policy/m);
    const proposed = await ledgerctl([...set, '--propose', '--justification', 'backups by one admin', '--json'], book.env);
    expect(proposed.code, proposed.stderr).toBe(0);
    expect((await ledgerctl(['ops', 'proposals', 'approve', proposed.json().result.proposal, '--yes'], { ...book.env, LEDGER_TOKEN: asAdaToken })).code).toBe(0);
    expect((await ledgerctl(['ops', 'policy', 'show', '--json'], book.env)).json()).toEqual({ rules: ['members', 'policy', 'legal_disclosure', 'issuance_above'], issuanceAboveMinor: { USD: '1000' }, ttlMs: 86_400_000 });
    expect((await ledgerctl(['ops', 'policy', 'set', '--rules', 'freeze', '--ttl-ms', 'soon', '--propose', '--justification', 'x'], book.env)).code).toBe(2);
  });
});

let asAdaToken = '';
