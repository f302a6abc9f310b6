/**
 * Builds, quickly, a ledgerd data dir whose book holds `postings` journal entries: the
 * real `init` (daemon/book.ts `initBook`) of a genesis funding `customers` accounts in
 * every asset, one real transfer per asset decided by the Kernel (the template), then
 * the rest of the transfers written straight into the store in the kernel's own layout
 * with the project's codec: per transfer its `op/` record (and its `ot/` index entry), client-key record and two
 * `aa/` index entries; per round a journal chunk and its `jt/` entry; per write the
 * balances it moved, `meta/cseq` and the head. Every write is one batch that leaves a
 * consistent book. Decision events are not written (a real book keeps only a window
 * of them); transfers move no layer's total, so `tb/` stays as genesis wrote it.
 *
 * The spread of account sizes: a few hot accounts (`benchAccount(0..hot-1)`) take part
 * in `hotShare` of the transfers, the rest fall on the many cold ones; each transfer is
 * in one of the assets, in turn. Round r is decided at `roundAtMs(r)`, one `roundMs`
 * apart, so a period of k rounds holds about the same movements in any book built
 * with the same shape.
 */
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { daemonKeys, initBook } from '../daemon/book.js';
import { leveldbStoreDefault } from '../daemon/config.js';
import { bookPaths } from '../daemon/data-dir.js';
import { builtInPrincipals } from '../src/auth/authority.js';
import { genesisSource } from '../src/book/genesis.js';
import { Kernel } from '../src/book/kernel.js';
import { verifyTotals } from '../src/book/totals.js';
import { transferDeadlineDefaultMs } from '../src/constants.js';
import {
  decodeBalanceText,
  decodeHead,
  decodeIndexedPosting,
  encodeBalance,
  encodeHead,
  encodeIndexedPosting,
  encodeOperationJson,
  JournalChunkText,
} from '../src/model/codec.js';
import { keys, prefixEnd } from '../src/model/keys.js';
import { keyedIds } from '../src/model/ids.js';
import type { Command, Operation, Posting } from '../src/model/model.js';
import type { AccountId, AssetSymbol, CredentialId } from '../src/model/values.js';
import { LevelStore } from '../src/store/level.js';
import { operationIndexPuts } from '../src/queries/operation-index.js';
import { encodeClientKeyRecord } from '../src/book/client-key-record.js';
import type { BatchOp } from '../src/store/port.js';
import { benchAccount, fundedCustomersGenesis } from './genesis.js';
import { seededRandom } from './soak/commands.js';

export interface LargeBookShape {
  /** Journal entries to reach (genesis's openings count); the last round may pass it by one transfer. */
  readonly postings: number;
  readonly customers: number;
  readonly hotAccounts: number;
  /** The share of transfers with a hot account on one side. */
  readonly hotShare: number;
  readonly assets: readonly AssetSymbol[];
  /** Journal entries per round (one chunk each). */
  readonly postingsPerRound: number;
  readonly roundMs: number;
}

export const defaultShape = (postings: number): LargeBookShape => ({
  postings,
  customers: Math.max(100, Math.min(100_000, Math.floor(postings / 100))),
  hotAccounts: 4,
  hotShare: 0.3,
  assets: ['USD', 'EUR', 'GBP'] as AssetSymbol[],
  postingsPerRound: 1024,
  roundMs: 1000,
});

/** What the bench needs to know of a built book; kept beside it (`large-book.json`). */
export interface LargeBookManifest {
  readonly shape: LargeBookShape;
  readonly postingSeq: number;
  readonly transfers: number;
  readonly hot: readonly AccountId[];
  readonly cold: readonly AccountId[];
  /** The first and last synthetic rounds' decision times. */
  readonly firstRoundAtMs: number;
  readonly lastRoundAtMs: number;
  readonly operatorKey: string;
}

const manifestPath = (dataDir: string) => join(dataDir, 'large-book.json');
const fundingMinor = 10n ** 12n;
const roundsPerWrite = 8;

export async function readManifest(dataDir: string): Promise<LargeBookManifest | null> {
  try {
    return JSON.parse(await readFile(manifestPath(dataDir), 'utf8')) as LargeBookManifest;
  } catch {
    return null;
  }
}

const operator = { principal: builtInPrincipals.operator, credential: 'did:ledger:cred:operator' as CredentialId, onBehalfOf: null, scope: null };

/** A decided transfer of each asset, as the kernel wrote it: its operation and its two postings (debit first). */
interface Template {
  readonly op: Operation;
  readonly debit: Posting;
  readonly credit: Posting;
}

/** One real transfer per asset through the Kernel, from customer 0 to customer 1, at `atMs`. Closing the kernel closes the store. */
async function decideTemplates(dataDir: string, ids: ReturnType<typeof keyedIds>, assets: readonly AssetSymbol[], atMs: number): Promise<Map<AssetSymbol, Template>> {
  const store = await LevelStore.open(bookPaths(dataDir).book, { createIfMissing: false });
  const kernel = await Kernel.open({ store, clock: () => atMs, ids, onFatal: (e) => { throw e; } });
  try {
    const acks = await Promise.all(
      assets.map((asset) =>
        kernel.submit({
          command: { type: 'transfer', legs: [{ from: benchAccount(0), to: benchAccount(1), asset, amountMinor: 1n }], deadlineMs: atMs + transferDeadlineDefaultMs },
          actor: operator,
          clientKey: null,
          requestDigest: createHash('sha256').update(`large-book template ${asset}`).digest('hex'),
          reference: null,
        }),
      ),
    );
    await kernel.idle();
    const templates = new Map<AssetSymbol, Template>();
    for (const [i, asset] of assets.entries()) {
      const op = (await kernel.operation(acks[i]!.operation.ref))!;
      if (op.state !== 'Completed') throw new Error(`the template transfer in ${asset} was not completed: ${JSON.stringify(op.error)}`);
      const [first, second] = op.result!.postings!;
      const [debitKey, creditKey] = [keys.accountAsset(benchAccount(0), asset, first!), keys.accountAsset(benchAccount(1), asset, second!)];
      const debit = decodeIndexedPosting(debitKey, (await store.get(debitKey))!);
      const credit = decodeIndexedPosting(creditKey, (await store.get(creditKey))!);
      templates.set(asset, { op, debit, credit });
    }
    return templates;
  } finally {
    await kernel.close();
  }
}

/**
 * Builds the book in `dataDir` (which must not hold one). Returns its manifest, also
 * written beside it. `progress` is told the postings written so far now and then.
 */
export async function buildLargeBook(dataDir: string, shape: LargeBookShape, nowMs: number, progress: (postings: number) => void = () => {}): Promise<LargeBookManifest> {
  const { assets, customers, hotAccounts, postingsPerRound, roundMs } = shape;
  if (!(hotAccounts >= 2 && customers >= hotAccounts + 2 && postingsPerRound % 2 === 0)) throw new Error('a large book needs at least two hot accounts, two cold ones and an even round');
  const genesisPostings = 2 * customers * assets.length;
  const transfers = Math.max(0, Math.ceil((shape.postings - genesisPostings) / 2) - assets.length);
  const rounds = Math.ceil((2 * transfers) / postingsPerRound);
  // History ends a minute before now: whatever ledgerd decides later comes after it.
  const firstRoundAtMs = nowMs - 60_000 - rounds * roundMs;
  const genesisAtMs = firstRoundAtMs - 2 * roundMs;

  await initBook(dataDir, genesisSource(fundedCustomersGenesis(customers, fundingMinor, assets)), genesisAtMs, leveldbStoreDefault);
  const operatorKey = (await readFile(bookPaths(dataDir).operatorKey, 'utf8')).trim();
  const ids = keyedIds((await daemonKeys(dataDir)).ids, 0);
  const templates = await decideTemplates(dataDir, ids, assets, genesisAtMs + 1);
  const store = await LevelStore.open(bookPaths(dataDir).book, { createIfMissing: false });
  try {
    // Every balance as it stands (genesis and the templates): the fold starts there.
    const available = new Map<string, bigint>();
    for await (const [key, text] of store.entries({ gte: keys.balancePrefix, lt: prefixEnd(keys.balancePrefix), limit: Number.MAX_SAFE_INTEGER })) {
      const b = decodeBalanceText(text);
      if (b.reserved !== 0n || b.encumbered !== 0n) throw new Error(`${key} holds more than its available layer`);
      available.set(key, b.available);
    }
    let head = decodeHead((await store.get(keys.head))!);
    const draw = seededRandom(0x1ed9e5);
    const cold = customers - hotAccounts;
    const coldIndex = () => hotAccounts + Math.floor(draw() * cold);

    let written = 0;
    for (let round = 0; round < rounds; round += roundsPerWrite) {
      const batch: BatchOp[] = [];
      const moved = new Set<string>();
      let { postingSeq, decidedCseq } = head;
      let atMs = head.lastAtMs;
      for (let r = round; r < Math.min(rounds, round + roundsPerWrite); r++) {
        atMs = firstRoundAtMs + r * roundMs;
        const firstSeq = postingSeq + 1;
        const journal = new JournalChunkText();
        for (let t = 0; t < postingsPerRound / 2 && written < transfers; t++, written++) {
          const asset = assets[written % assets.length]!;
          const template = templates.get(asset)!;
          let from = coldIndex();
          let to = coldIndex();
          while (to === from) to = coldIndex();
          if (draw() < shape.hotShare) {
            const hot = Math.floor(draw() * hotAccounts);
            if (draw() < 0.5) from = hot;
            else to = hot;
          }
          const amountMinor = 1n + BigInt(written % 97);
          const cseq = ++decidedCseq;
          const ref = ids.operationRef(cseq);
          const fromId = benchAccount(from);
          const toId = benchAccount(to);
          const command: Command = { type: 'transfer', legs: [{ from: fromId, to: toId, asset, amountMinor }], deadlineMs: atMs + transferDeadlineDefaultMs };
          const clientKey = `large-book-${cseq}`;
          const seqs = [++postingSeq, ++postingSeq];
          const sides = [
            { template: template.debit, account: fromId, counterparty: toId, signed: -amountMinor },
            { template: template.credit, account: toId, counterparty: fromId, signed: amountMinor },
          ];
          for (const [i, side] of sides.entries()) {
            const balanceKey = keys.balance(side.account, asset);
            const after = available.get(balanceKey)! + side.signed;
            if (after < 0n) throw new Error(`${balanceKey} would fall below its floor`);
            available.set(balanceKey, after);
            moved.add(balanceKey);
            const posting: Posting = { ...side.template, seq: seqs[i]!, atMs, account: side.account, counterparty: side.counterparty, amountMinor, operation: ref, after: { available: after, reserved: 0n, encumbered: 0n } };
            const indexed = encodeIndexedPosting(posting);
            journal.add(side.account, asset, indexed);
            batch.push({ type: 'put', key: keys.accountAsset(side.account, asset, posting.seq), value: indexed });
          }
          const op: Operation = { ...template.op, ref, cseq, command, submittedAtMs: atMs, decidedAtMs: atMs, clientKey, clientKeyDerived: false, result: { postings: seqs } };
          batch.push({ type: 'put', key: keys.operation(ref), value: encodeOperationJson(op) }, ...operationIndexPuts([op]));
          batch.push({ type: 'put', key: keys.clientKey(operator.principal, clientKey), value: encodeClientKeyRecord({ digest: createHash('sha256').update(clientKey).digest('hex'), ref }) });
        }
        batch.push({ type: 'put', key: keys.journal(firstSeq), value: journal.take() });
        batch.push({ type: 'put', key: keys.journalTime(atMs, firstSeq), value: '' });
      }
      for (const key of moved) batch.push({ type: 'put', key, value: JSON.stringify(encodeBalance({ available: available.get(key)!, reserved: 0n, encumbered: 0n })) });
      head = { ...head, decidedCseq, postingSeq, lastAtMs: atMs };
      batch.push({ type: 'put', key: keys.cseq, value: String(decidedCseq) });
      batch.push({ type: 'put', key: keys.head, value: encodeHead(head) });
      await store.write(batch, false);
      progress(postingSeq);
    }
    await store.write([{ type: 'put', key: keys.head, value: encodeHead(head) }], true);
    const manifest: LargeBookManifest = {
      shape,
      postingSeq: head.postingSeq,
      transfers,
      hot: Array.from({ length: hotAccounts }, (_, i) => benchAccount(i)),
      cold: Array.from({ length: 8 }, (_, i) => benchAccount(customers - 1 - i)),
      firstRoundAtMs,
      lastRoundAtMs: head.lastAtMs,
      operatorKey,
    };
    await writeFile(manifestPath(dataDir), JSON.stringify(manifest, null, 2));
    return manifest;
  } finally {
    await store.close();
  }
}

export interface BookProof {
  readonly postingSeq: number;
  readonly accounts: number;
  /** Assets whose trial balance is not zero (none in a valid book). */
  readonly unbalanced: number;
  /** `verifyTotals`: every stored total equals the sum of its balances and sums to zero. */
  readonly totalsOk: boolean;
}

/** Opens the built book with the real Kernel: its trial balance, and the full pass over every balance. */
export async function proveBook(dataDir: string): Promise<BookProof> {
  const store = await LevelStore.open(bookPaths(dataDir).book, { createIfMissing: false });
  const kernel = await Kernel.open({ store, clock: Date.now, ids: keyedIds((await daemonKeys(dataDir)).ids, 0), onFatal: (e) => { throw e; } });
  try {
    const view = await kernel.openView();
    try {
      const tb = await view.trialBalance(null);
      return { postingSeq: view.view, accounts: tb.accounts, unbalanced: tb.unbalanced.length, totalsOk: (await verifyTotals(store)).ok };
    } finally {
      await view.close();
    }
  } finally {
    await kernel.close();
  }
}
