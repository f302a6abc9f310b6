/**
 * The crash test's child: opens a book (on LevelDB in DIR, or on PostgreSQL in the table
 * `postgres:TABLE` of the database at $LEDGER_CRASH_PG_URL), retries the last few commands of
 * the previous run (as a client would after losing its connection), then submits a
 * stream of transfers, printing `ACK <n> <ref>` once each is durably acknowledged.
 * The parent kills it with SIGKILL at a random instant.
 *
 *   node dist/test/support/crash-child.js DIR START COUNT
 */
import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { Refused } from '../../src/errors.js';
import { sequentialIds } from '../../src/model/ids.js';
import { Kernel } from '../../src/book/kernel.js';
import { LevelStore } from '../../src/store/level.js';
import { leaseTimings, openLeasedStore } from '../../src/store/postgres-lease.js';
import type { Store } from '../../src/store/port.js';
import type { AccountId, AssetSymbol, CredentialId, IdentityId } from '../../src/model/values.js';

export const crashCustomers = 8;
/** The PostgreSQL lease of the crash test's deciders: short, since each reopen waits for a killed child's to lapse. */
const crashLeaseMs = 300;
const retried = 32;
const inFlightMax = 64;

export function crashCommand(n: number) {
  const from = n % crashCustomers;
  const to = (n + 1) % crashCustomers;
  return {
    actor: { principal: `did:ledger:id:c${from}` as IdentityId, credential: `did:ledger:cred:c${from}` as CredentialId, onBehalfOf: null },
    command: {
      type: 'transfer' as const,
      legs: [{ from: `did:ledger:acct:c${from}` as AccountId, to: `did:ledger:acct:c${to}` as AccountId, asset: 'USD' as AssetSymbol, amountMinor: BigInt(1 + (n % 5)) }],
      deadlineMs: Number.MAX_SAFE_INTEGER,
    },
    clientKey: `c-${n}`,
    requestDigest: createHash('sha256').update(`crash-${n}`).digest('hex'),
    reference: null,
  };
}

/** The crash test's book: `postgres:TABLE` (the database at $LEDGER_CRASH_PG_URL), else a LevelDB dir. */
export async function openCrashStore(where: string): Promise<Store> {
  if (!where.startsWith('postgres:')) return LevelStore.open(where);
  const url = process.env.LEDGER_CRASH_PG_URL;
  if (url === undefined) throw new Error('LEDGER_CRASH_PG_URL is not set');
  // As a daemon does: one decider at a time, so a killed child's last write, still running in the server, cannot land
  // after the next one opened the book (it holds the lease row until it commits, or finds the next epoch and writes nothing).
  const store = await openLeasedStore({ url, poolSize: 2 }, `crash-${process.pid}`, leaseTimings(crashLeaseMs), {}, undefined, where.slice('postgres:'.length));
  return store!;
}

/** Every `approvalEvery`th command goes by a proposal (CONTRACT 13): root proposes an operator transfer, `approver` approves it. */
export const approvalEvery = 7;
export const isApproval = (n: number) => n % approvalEvery === 3;
export const approverCredential = 'did:ledger:cred:approver' as CredentialId;
const operator = { principal: 'did:ledger:id:operator' as IdentityId, credential: 'did:ledger:cred:operator' as CredentialId, onBehalfOf: null };

/** Proposes command `n` as root and waits for the proposal's id; then submits its act as approved. */
async function approveCommand(kernel: Kernel, n: number) {
  const { command } = crashCommand(n);
  const digest = (what: string) => createHash('sha256').update(`crash-${what}-${n}`).digest('hex');
  const proposed = await kernel.submit({
    actor: operator,
    command: { type: 'propose', request: JSON.stringify({ n }), justification: `crash ${n}`, acts: [], approverRole: 'operator' },
    clientKey: `p-${n}`,
    requestDigest: digest('propose'),
    reference: null,
  });
  const decided = proposed.operation.state === 'Completed' ? proposed.operation : await kernel.decision(proposed.operation.ref, 60_000);
  const proposal = decided?.result?.proposal;
  // A proposal refused as any command may be (kills leave proposals open, and a member holds at most 64): the command is refused, not acknowledged.
  if (proposal === undefined && decided?.error) throw new Refused(decided.error.error, decided.error.description);
  if (proposal === undefined) throw new Error(`proposal of ${n} not made`);
  return kernel.submit({
    actor: operator,
    command,
    clientKey: `proposal:${proposal.slice('did:ledger:proposal:'.length)}`,
    requestDigest: digest('act'),
    reference: null,
    approval: { proposal, approver: approverCredential },
  });
}

async function main() {
  const [dir, startText, countText] = process.argv.slice(2);
  const start = Number(startText);
  const count = Number(countText);
  const kernel = await Kernel.open({ store: await openCrashStore(dir!), clock: Date.now, ids: sequentialIds });
  const submit = async (n: number) => {
    try {
      const ack = isApproval(n) ? await approveCommand(kernel, n) : await kernel.submit(crashCommand(n));
      writeSync(1, `ACK ${n} ${ack.operation.ref}\n`);
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      writeSync(1, `REFUSED ${n} ${e.refusal.error}\n`);
    }
  };
  const numbers = [...Array.from({ length: Math.min(retried, start) }, (_, i) => start - retried + i).filter((n) => n >= 0), ...Array.from({ length: count }, (_, i) => start + i)];
  let next = 0;
  const worker = async () => {
    while (next < numbers.length) await submit(numbers[next++]!);
  };
  await Promise.all(Array.from({ length: inFlightMax }, worker));
  await kernel.close();
  writeSync(1, 'DONE\n');
}

if (process.argv[1]?.endsWith('crash-child.js')) {
  main().catch((e) => {
    writeSync(2, `${String(e?.stack ?? e)}\n`);
    process.exit(1);
  });
}
