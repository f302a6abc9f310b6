/** Test harness: a kernel over a chosen store, with a clock the test moves. */
import { createHash } from 'node:crypto';
import type { Actor } from '../../src/auth/authority.js';
import { builtInPrincipals } from '../../src/auth/authority.js';
import { type Genesis, defaultGenesis, importGenesis, parseGenesis } from '../../src/book/genesis.js';
import { sequentialIds } from '../../src/model/ids.js';
import { Kernel, type Submission } from '../../src/book/kernel.js';
import type { Command, Operation } from '../../src/model/model.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { Store } from '../../src/store/port.js';
import type { AccountId, AssetSymbol, CredentialId, IdentityId, ReferenceJson } from '../../src/model/values.js';

export class TestClock {
  constructor(public nowMs = 1_700_000_000_000) {}
  readonly read = () => this.nowMs;
  advance(ms: number) {
    this.nowMs += ms;
  }
}

export const operator: Actor = { principal: builtInPrincipals.operator, credential: 'did:ledger:cred:operator' as CredentialId, onBehalfOf: null };
export const actorOf = (identity: string): Actor => ({ principal: identity as IdentityId, credential: `did:ledger:cred:${identity.split(':').pop()}` as CredentialId, onBehalfOf: null });

export const acct = (s: string) => s as AccountId;
export const sym = (s: string) => s as AssetSymbol;

/** Two customers with USD in delegated custody, funded from the USD treasury at genesis. */
export function customersGenesis(customers: Record<string, bigint>): Genesis {
  const base = defaultGenesis();
  const ids = Object.keys(customers).map((name) => `did:ledger:id:${name}`);
  const doc = {
    assets: base.assets.map((a) => ({ id: a.id, kind: a.kind, precision: a.precision })),
    identities: ids,
    accounts: [
      ...base.accounts.map((a) => ({ account: a.id, owner: a.owner, kind: a.kind, custody: a.custody, treasury_limits: Object.fromEntries(Object.entries(a.treasuryLimits).map(([k, v]) => [k, v.toString()])) })),
      ...Object.keys(customers).map((name) => ({ account: `did:ledger:acct:${name}`, owner: `did:ledger:id:${name}`, kind: 'customer', custody: 'delegated' })),
    ],
    openings: Object.entries(customers).flatMap(([name, amount]) =>
      amount === 0n
        ? []
        : [
            { account: `did:ledger:acct:${name}`, asset: 'USD', amount: amount.toString(), direction: 'credit' },
            { account: 'did:ledger:acct:treasury-USD', asset: 'USD', amount: amount.toString(), direction: 'debit' },
          ],
    ),
    aliases: base.aliases.map((a) => ({ source: a.source, name: a.name, account: a.account })),
    archived: [{ source: 'legacy', name: 'gone-1' }],
  };
  return parseGenesis(JSON.stringify(doc));
}

/** The key test kernels MAC challenges under. */
export const testChallengeKey = new Uint8Array(32).fill(7);

export async function openBook(options: { genesis?: Genesis; store?: Store; clock?: TestClock; cacheEntries?: number } = {}) {
  const store = options.store ?? new MemoryStore();
  const clock = options.clock ?? new TestClock();
  if ((await store.get('meta/sealed')) === undefined) await importGenesis(store, options.genesis ?? defaultGenesis(), clock.nowMs);
  const kernel = await Kernel.open({ store, clock: clock.read, ids: sequentialIds, cacheEntries: options.cacheEntries, challengeMacKey: testChallengeKey });
  return { kernel, store, clock };
}

/** An account's available balance in USD, read through a view of the book. */
export async function available(kernel: Kernel, account: string): Promise<bigint> {
  const view = await kernel.openView();
  try {
    return (await view.balance(acct(account), sym('USD'))).available;
  } finally {
    await view.close();
  }
}

let counter = 0;
export function submission(actor: Actor, command: Command, opts: { clientKey?: string | null; reference?: string } = {}): Submission {
  const digest = createHash('sha256').update(JSON.stringify([actor.principal, command, opts.reference ?? null], (_k, v) => (typeof v === 'bigint' ? v.toString() : v))).digest('hex');
  return {
    command,
    actor,
    clientKey: opts.clientKey === undefined ? `k-${++counter}` : opts.clientKey,
    requestDigest: digest,
    reference: (opts.reference ?? null) as ReferenceJson | null,
  };
}

/** A Received operation of command `cseq`, as intake records it, for tests that build rounds or intake records by hand. */
export function receivedOperation(cseq: number, command: Operation['command'], actor: Operation['actor'], submittedAtMs: number): Operation {
  return {
    ref: sequentialIds.operationRef(cseq),
    cseq,
    command,
    actor,
    scope: null,
    state: 'Received',
    submittedAtMs,
    decidedAtMs: null,
    clientKey: `k${cseq}`,
    clientKeyDerived: false,
    reference: null,
    result: null,
    error: null,
    hold: null,
  };
}

export function transfer(from: string, to: string, amountMinor: bigint, deadlineMs = Number.MAX_SAFE_INTEGER, asset = 'USD'): Command {
  return { type: 'transfer', legs: [{ from: acct(from), to: acct(to), asset: sym(asset), amountMinor }], deadlineMs };
}

/** The operator's issuance grant to itself over one treasury account (CONTRACT 5: issuance needs one). */
export function issuanceGrant(treasury: string, principal: string = builtInPrincipals.operator): Command {
  return {
    type: 'issue_grant',
    justification: 'opening float for the test book',
    terms: {
      kind: 'issuance',
      principal: principal as IdentityId,
      subject: { account: acct(treasury) },
      ops: ['transfer'],
      assets: null,
      counterparties: null,
      expiresAtMs: null,
      parent: null,
      perOperationMinor: null,
      perWindow: null,
    },
  };
}
