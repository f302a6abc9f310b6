/**
 * Settlement flows, the daemon's side (docs/settlement.md): facts carried both ways
 * between the embedded layer and the book. The layer's blocks are read here and handed
 * to the kernel as `settle` commands (taken in as each run of blocks is made, and on
 * request), and what the kernel decided is handed to the layer (a withdrawal's
 * instruction, a binding's attestation request). daemon/settlement.ts owns the timers.
 */
import { createHash } from 'node:crypto';
import { assert } from '../src/assert.js';
import type { FastifyBaseLogger } from 'fastify';
import { settleBlocksPerCommandMax, settleDuePerCommandMax, settleItemsPerCommandMax } from '../src/constants.js';
import type { Kernel } from '../src/book/kernel.js';
import type { Asset, Command, Operation, SettleBlock } from '../src/model/model.js';
import type { CredentialId } from '../src/model/values.js';
import type { LayerBlock } from '../src/settlement/adapter.js';
import { decodeSettlementMeta, pendingRefOf } from '../src/settlement/book.js';
import type { EmbeddedLayer } from '../src/settlement/embedded.js';
import { settlementKeys } from '../src/model/keys.js';
import { intakeDecisionWaitMs, pendingWithdrawalsPageEntries } from './constants.js';
import type { ReadGate } from './snapshot-slots.js';

export interface SettlementFlows {
  /** Starts carrying facts between the layer and `kernel`: decisions handed over, blocks taken in, the book read through `gate` (the read slots). */
  start(log: FastifyBaseLogger, kernel: Kernel, gate: ReadGate): void;
  /** The `settle` command that takes in what the layer holds now, up to its head (null: nothing new since the book's last final height). */
  settleCommand(kernel: Kernel, always: boolean): Promise<Command | null>;
  /** Stops taking in and waits for the intake in flight. */
  close(): Promise<void>;
}

/** The credential automatic intake is recorded under: the operator's own (CONTRACT 5). */
const operatorCredential = 'did:ledger:cred:operator' as CredentialId;

export function settlementFlows(layer: EmbeddedLayer): SettlementFlows {
  let intake: Promise<unknown> = Promise.resolve();
  let intakeWanted = false;
  let intakeRunning = false;
  let closed = false;
  const offs: (() => void)[] = [];
  /** Heights up to here were read and carried nothing for the book (kept in memory only: a restart reads them again). */
  let emptyThrough = 0;
  /** The read slots every read of the book the flows make runs in (given at start, before any read). */
  let slots: ReadGate | null = null;
  const gate: ReadGate = (read) => {
    assert(slots !== null, 'the flows read the book only once started');
    return slots(read);
  };

  const settleCommand = async (kernel: Kernel, always: boolean): Promise<Command | null> => {
    const meta = decodeSettlementMeta(await kernel.settlementRecord(settlementKeys.meta));
    const head = layer.currentHead;
    const from = Math.max(meta.height, always ? 0 : emptyThrough) + 1;
    let to = Math.min(head.height, from + settleBlocksPerCommandMax - 1);
    // Whole blocks, until they carry settleItemsPerCommandMax items: one decision stays short for the commands behind it.
    const blocks: SettleBlock[] = [];
    let items = 0;
    for (const block of to >= from ? await layer.blocks(from, to) : []) {
      const facts = factsOf(block);
      items += itemsOf(facts);
      if (itemsOf(facts) > 0) blocks.push(facts);
      if (items >= settleItemsPerCommandMax) {
        to = block.height;
        break;
      }
    }
    const finalHeight = Math.min(head.finalHeight, Math.max(to, meta.height));
    // Withdrawals whose expiry height is final by now (in expiry order): the decision expires those no block carried.
    const due = (await kernel.settlementRecords(settlementKeys.pendingPrefix, settlementKeys.pendingPrefix, settleDuePerCommandMax))
      .filter(([key]) => key < settlementKeys.pendingAfter(finalHeight))
      .map(([key]) => pendingRefOf(key));
    if (!always && blocks.length === 0 && due.length === 0) {
      // Nothing for the book in these blocks, final or not: they need not be read again.
      emptyThrough = Math.max(emptyThrough, to);
      return null;
    }
    return { type: 'settle', finalHeight, headHeight: Math.max(to, meta.height), blocks, due };
  };

  /** How far intake has read: the book's last final height taken in, or the empty blocks past it. */
  const readThrough = async (kernel: Kernel) => Math.max(decodeSettlementMeta(await kernel.settlementRecord(settlementKeys.meta)).height, emptyThrough);

  const runIntake = async (kernel: Kernel) => {
    while (intakeWanted && !closed) {
      intakeWanted = false;
      const before = await gate(() => readThrough(kernel));
      const command = await gate(() => settleCommand(kernel, false));
      if (command !== null) {
        const digest = createHash('sha256').update(`ledgerd settle ${JSON.stringify(command, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`).digest('hex');
        const ack = await kernel.submit({ command, actor: { principal: kernel.principals.operator, credential: operatorCredential, onBehalfOf: null }, clientKey: null, requestDigest: digest, reference: null });
        await kernel.decision(ack.operation.ref, intakeDecisionWaitMs);
      }
      // A run of blocks longer than one command reads is taken in command after command, as long as each gets further.
      const after = await gate(() => readThrough(kernel));
      if (after > before && after < layer.currentHead.finalHeight) intakeWanted = true;
    }
  };

  const wantIntake = (kernel: Kernel, log: FastifyBaseLogger) => {
    intakeWanted = true;
    if (intakeRunning || closed) return;
    intakeRunning = true;
    intake = runIntake(kernel)
      .catch((error: unknown) => log.warn({ err: error }, 'taking in the settlement layer failed; it is tried again with the next block'))
      .finally(() => {
        intakeRunning = false;
      });
  };

  /** What the kernel decided that the layer must carry. */
  const handOver = async (op: Operation, kernel: Kernel) => {
    const instruction = op.result?.settlement?.instruction as { digest: string; amount: string; destination: { account?: string; instance?: number; account_ref?: string } } | undefined;
    if (op.command.type === 'withdraw' && op.state === 'Instructed' && instruction !== undefined) {
      const asset = kernel.assetList.find((a) => a.id === (op.command as { asset: string }).asset);
      const { destination } = instruction;
      await layer.submitInstruction({
        digest: instruction.digest,
        location: asset?.location ?? '',
        amountMinor: BigInt(instruction.amount),
        destination: destination.account !== undefined ? { account: destination.account } : { instance: destination.instance!, accountRef: destination.account_ref! },
        expiryHeight: (op.result!.settlement!.instruction as { expiry: number }).expiry,
      }, op.actor.principal);
    }
    if (op.command.type === 'bind_asset' && op.state === 'Completed') {
      const asset = kernel.assetList.find((a) => a.id === (op.command as { asset: string }).asset);
      if (asset !== undefined) await askAttestation(asset);
    }
  };

  /** The embedded layer attests only locations it knows: a binding to an unknown one declares it as the book's asset. */
  const askAttestation = async (asset: Asset) => {
    if (asset.location === null) return;
    if ((await layer.location(asset.location)) === undefined) {
      await layer.registerLocation({ location: asset.location, symbol: asset.id, decimals: asset.precision, status: 'active' });
    }
    await layer.requestAttestation(asset.location);
  };

  /** After a restart: instructions decided but perhaps never handed over, and bindings still waiting, are handed over again (the layer takes each once). */
  const resume = async (kernel: Kernel) => {
    let fromKey = settlementKeys.pendingPrefix;
    for (;;) {
      const page = await gate(() => kernel.settlementRecords(settlementKeys.pendingPrefix, fromKey, pendingWithdrawalsPageEntries));
      for (const [key] of page) {
        const op = await gate(() => kernel.operation(pendingRefOf(key)));
        if (op !== undefined) await handOver(op, kernel);
      }
      if (page.length < pendingWithdrawalsPageEntries) break;
      fromKey = `${page[page.length - 1]![0]}\u0000`;
    }
    for (const asset of kernel.assetList) if (asset.binding === 'binding') await askAttestation(asset);
  };

  return {
    settleCommand,
    start(log, kernel, readGate) {
      slots = readGate;
      const warn = (what: string) => (error: unknown) => log.warn({ err: error }, what);
      offs.push(kernel.onDecision(({ operation }) => void handOver(operation, kernel).catch(warn('handing a decision to the settlement layer failed'))));
      offs.push(layer.onBlocks(() => wantIntake(kernel, log)));
      void resume(kernel).catch(warn('handing pending instructions to the settlement layer failed'));
      wantIntake(kernel, log);
    },
    async close() {
      closed = true;
      for (const off of offs.splice(0)) off();
      await intake;
    },
  };
}

/** What a block says that concerns the book. */
function factsOf(block: LayerBlock): SettleBlock {
  return {
    height: block.height,
    deposits: block.deposits.map((d) => ({ seq: d.coordinate.seq, digest: d.coordinate.digest, location: d.location, amountMinor: d.amountMinor, accountRef: d.accountRef, height: d.height })),
    instructions: block.instructions.map((i) => ({ digest: i.digest, location: i.location, amountMinor: i.amountMinor })),
    expired: [...block.expired],
    attestations: [...block.attestations],
  };
}

const itemsOf = (b: SettleBlock) => b.deposits.length + b.instructions.length + b.expired.length + b.attestations.length;
