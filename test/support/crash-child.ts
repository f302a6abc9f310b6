/**
 * The crash test's child: opens a book on LevelDB, retries the last few commands of
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
import type { AccountId, AssetSymbol, CredentialId, IdentityId } from '../../src/model/values.js';

export const crashCustomers = 8;
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

async function main() {
  const [dir, startText, countText] = process.argv.slice(2);
  const start = Number(startText);
  const count = Number(countText);
  const kernel = await Kernel.open({ store: await LevelStore.open(dir!), clock: Date.now, ids: sequentialIds });
  const submit = async (n: number) => {
    try {
      const ack = await kernel.submit(crashCommand(n));
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
