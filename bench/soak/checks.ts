/**
 * The checks after each restart, all through the API:
 *
 * - every command whose reply was lost is repeated with its client key: it was either
 *   absent (the repeat submits it now) or is there, decided once;
 * - every command acknowledged since the last check (and a sample of older ones) exists
 *   under its client key and reference and is decided; its repeat answers the same
 *   operation (200 once terminal) and appends nothing;
 * - the movements of each account since the last check sum, per balance (available,
 *   reserved, encumbered), to the change of that balance (read as a statement's opening),
 *   so every balance equals the sum of all its movements; each movement belongs to a
 *   command the soak sent, and each decided command has exactly its own postings;
 * - customers' balances are not negative, all USD balances sum to zero, and the trial
 *   balance is balanced.
 */
import type { Client } from '../../test/daemon/support.js';
import { type SoakCommand, customerAccount, decidedStates, ownPostingsOf } from './commands.js';
import type { Findings } from './findings.js';
import { checksInFlightMax, eachLimited, postCommand } from './http.js';
import { takeReply } from './load.js';

/** How long a command acknowledged before a kill may take to be decided after the restart. */
export const decisionWaitMs = 30_000;
const decisionPollMs = 20;
/** Older acknowledged commands repeated after each restart, beside those of the last round. */
export const olderSampleSize = 32;
const movementsPageLimit = 1000;

const balanceKinds = ['available', 'reserved', 'encumbered'] as const;
type Balances = Record<(typeof balanceKinds)[number], bigint>;
const zeroBalances = (): Balances => ({ available: 0n, reserved: 0n, encumbered: 0n });

const terminalStates = new Set(['Completed', 'Rejected', 'Expired', 'Captured', 'Released']);

export interface Tally {
  /** Commands whose reply was lost and that the book held (decided once) before their repeat. */
  unknownFound: number;
  /** Commands whose reply was lost and that the book had never taken (the repeat submitted them). */
  unknownAbsent: number;
  /** Decided states of verified commands, by kind and state (e.g. `transfer Rejected ERR-InsufficientAvailable`). */
  readonly decided: Map<string, number>;
}

export class BookChecker {
  readonly tally: Tally = { unknownFound: 0, unknownAbsent: 0, decided: new Map() };
  private readonly accounts: readonly string[];
  private readonly byRef = new Map<string, SoakCommand>();
  private readonly verified: SoakCommand[] = [];
  private readonly ownPostings = new Map<string, number>();
  private readonly seenSeqs = new Set<number>();
  private readonly submittedAtMs = new WeakMap<SoakCommand, number>();
  private balances = new Map<string, Balances>();
  private windowStartMs = 0;

  constructor(
    private readonly options: {
      customers: readonly string[];
      tokenOf: (customer: string) => string;
      findings: Findings;
      random: () => number;
      /** A reservation verified as Reserved: it may now be captured or released. */
      reserved: (reservation: SoakCommand) => void;
    },
  ) {
    this.accounts = [...options.customers.map(customerAccount), 'did:ledger:acct:treasury-USD'];
    for (const account of this.accounts) this.balances.set(account, zeroBalances());
  }

  /**
   * After a restart (`restartedAtMs`: before the spawn): learns what became of the
   * commands in `unknown` by repeating them, verifies `fresh` (acknowledged since the
   * last check) and the book as a whole.
   */
  async afterRestart(api: Client, unknown: readonly SoakCommand[], fresh: readonly SoakCommand[], restartedAtMs: number): Promise<void> {
    const { findings } = this.options;
    await eachLimited(unknown, checksInFlightMax, async (command) => {
      takeReply(command, await postCommand(api, this.options.tokenOf(command.sender), command), findings);
    });
    const learned = unknown.filter((c) => c.outcome === 'acknowledged');
    const toVerify = [...fresh, ...learned];
    await eachLimited(toVerify, checksInFlightMax, (command) => this.verifyDecided(api, command));
    for (const command of learned) {
      // Submitted before the restart: the kill only took its reply. Else the repeat was its first arrival.
      if (command.state !== null && this.submittedAtMs.get(command)! < restartedAtMs) this.tally.unknownFound++;
      else this.tally.unknownAbsent++;
    }
    const older = this.sampleOlder();
    const newlyVerified = toVerify.filter((c) => c.state !== null);
    this.verified.push(...newlyVerified);
    await eachLimited([...newlyVerified, ...older], checksInFlightMax, (command) => this.repeat(api, command));
    await this.checkMovements(api, newlyVerified);
    await this.checkTrialBalance(api);
  }

  /** At the end: every command ever acknowledged is still there, as sent and as decided. */
  async everyAcknowledged(api: Client, commands: readonly SoakCommand[]): Promise<void> {
    const acknowledged = commands.filter((c) => c.outcome === 'acknowledged');
    await eachLimited(acknowledged, checksInFlightMax, async (command) => {
      const before = command.state;
      await this.verifyDecided(api, command);
      if (before !== null && terminalStates.has(before) && command.state !== before) {
        this.options.findings.problem(`command ${command.n} (${command.operationRef}) was ${before} and is now ${command.state}`);
      }
    });
  }

  /** Reads the operation until it is decided; it must be there, under the command's client key and reference. */
  private async verifyDecided(api: Client, command: SoakCommand): Promise<void> {
    const { findings } = this.options;
    const ref = command.operationRef!;
    const waitUntil = Date.now() + decisionWaitMs;
    for (;;) {
      const reply = await api.get(`/v1/operations/${ref}`);
      if (reply.status === 404) return findings.lostCommand(`command ${command.n} (${command.clientKey}) was acknowledged as ${ref}, which the book does not know`);
      if (reply.status !== 200) return findings.problem(`GET /v1/operations/${ref}: ${reply.status} ${reply.text.slice(0, 300)}`);
      const view = reply.body;
      if (view.client_key !== command.clientKey || JSON.stringify(view.reference) !== JSON.stringify(command.reference) || view.command !== command.kind) {
        return findings.lostCommand(`command ${command.n} (${command.clientKey}, ${command.kind}) was acknowledged as ${ref}, which holds ${view.command} under ${view.client_key} with reference ${JSON.stringify(view.reference)}`);
      }
      if (decidedStates.has(view.state)) {
        this.byRef.set(ref, command);
        this.submittedAtMs.set(command, view.submitted_at);
        const first = command.state === null;
        command.state = view.state;
        command.error = view.error?.error ?? null;
        if (first) this.count(command);
        if (first && command.kind === 'reserve' && view.state === 'Reserved') this.options.reserved(command);
        return;
      }
      if (Date.now() > waitUntil) return findings.problem(`command ${command.n} (${ref}) is still ${view.state} ${decisionWaitMs} ms after the restart`);
      await new Promise((resolve) => setTimeout(resolve, decisionPollMs));
    }
  }

  private count(command: SoakCommand): void {
    const key = [command.kind, command.state, command.error].filter((x) => x !== null).join(' ');
    this.tally.decided.set(key, (this.tally.decided.get(key) ?? 0) + 1);
  }

  private sampleOlder(): SoakCommand[] {
    const size = Math.min(olderSampleSize, this.verified.length);
    return Array.from({ length: size }, () => this.verified[Math.floor(this.options.random() * this.verified.length)]!);
  }

  /** A repeat under the client key answers the same operation, 200 once terminal, with no second effect (the movements show). */
  private async repeat(api: Client, command: SoakCommand): Promise<void> {
    const reply = await postCommand(api, this.options.tokenOf(command.sender), command);
    takeReply(command, reply, this.options.findings);
    if (terminalStates.has(command.state!) && !(reply.status === 200 && reply.body?.terminal === true)) {
      this.options.findings.problem(`the repeat of command ${command.n} (${command.state}) answered ${reply.status} ${reply.text.slice(0, 300)}`);
    }
  }

  /** Movements since the last check, account by account, against the change of each balance. */
  private async checkMovements(api: Client, newlyVerified: readonly SoakCommand[]): Promise<void> {
    const { findings } = this.options;
    const windowEndMs = Date.now();
    const touched = new Set<SoakCommand>(newlyVerified);
    const next = new Map<string, Balances>();
    let totalMinor = 0n;
    for (const account of this.accounts) {
      const change = zeroBalances();
      for (const movement of await this.movements(api, account, this.windowStartMs, windowEndMs)) {
        if (this.seenSeqs.has(movement.seq)) findings.doubledCommand(`posting ${movement.seq} (${movement.operation}) is listed twice`);
        this.seenSeqs.add(movement.seq);
        const amountMinor = BigInt(movement.amount);
        change[movement.balance as keyof Balances] += movement.direction === 'credit' ? amountMinor : -amountMinor;
        if (movement.kind === 'opening' && movement.operation === 'genesis') continue;
        const command = this.byRef.get(movement.operation);
        if (command === undefined) {
          findings.doubledCommand(`posting ${movement.seq} on ${account} belongs to ${movement.operation}, which no acknowledged command of the soak became`);
          continue;
        }
        this.ownPostings.set(movement.operation, (this.ownPostings.get(movement.operation) ?? 0) + 1);
        touched.add(command);
      }
      const was = this.balances.get(account)!;
      const now = await this.balancesAt(api, account, windowEndMs);
      for (const kind of balanceKinds) {
        if (was[kind] + change[kind] !== now[kind]) {
          findings.problem(`${account} ${kind}: ${now[kind]} at ${windowEndMs}, but ${was[kind]} at ${this.windowStartMs} and movements of ${change[kind]} since`);
        }
        totalMinor += now[kind];
      }
      if (account.startsWith('did:ledger:acct:treasury-') === false && (now.available < 0n || now.reserved < 0n)) findings.problem(`${account} is below zero: ${JSON.stringify(now, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
      next.set(account, now);
    }
    if (totalMinor !== 0n) findings.problem(`USD balances sum to ${totalMinor}, not zero`);
    for (const command of touched) {
      const postings = this.ownPostings.get(command.operationRef!) ?? 0;
      const expected = ownPostingsOf(command);
      if (postings > expected) findings.doubledCommand(`command ${command.n} (${command.kind} ${command.state}, ${command.operationRef}) has ${postings} postings, not ${expected}`);
      else if (postings < expected) findings.problem(`command ${command.n} (${command.kind} ${command.state}, ${command.operationRef}) has ${postings} postings, not ${expected}`);
    }
    this.balances = next;
    this.windowStartMs = windowEndMs;
  }

  /** Every movement of `account` in [fromMs, toMs), page after page. */
  private async movements(api: Client, account: string, fromMs: number, toMs: number): Promise<any[]> {
    const out: any[] = [];
    let cursor: string | undefined;
    do {
      const query = new URLSearchParams({ account, from: String(fromMs), to: String(toMs), limit: String(movementsPageLimit), ...(cursor === undefined ? {} : { cursor }) });
      const reply = await api.get(`/v1/movements?${query}`);
      if (reply.status !== 200) throw new Error(`GET /v1/movements for ${account}: ${reply.status} ${reply.text}`);
      out.push(...reply.body.movements);
      cursor = reply.body.next;
    } while (cursor !== undefined);
    return out;
  }

  /** The balances of `account` at `atMs`: the opening of a statement starting then. */
  private async balancesAt(api: Client, account: string, atMs: number): Promise<Balances> {
    const query = new URLSearchParams({ account, asset: 'USD', from: String(atMs), to: String(atMs + 1) });
    const reply = await api.get(`/v1/statements?${query}`);
    if (reply.status !== 200) throw new Error(`GET /v1/statements for ${account}: ${reply.status} ${reply.text}`);
    const opening = reply.body.opening;
    return { available: BigInt(opening.available), reserved: BigInt(opening.reserved), encumbered: BigInt(opening.encumbered) };
  }

  private async checkTrialBalance(api: Client): Promise<void> {
    const reply = await api.get('/v1/trial-balance');
    if (reply.status !== 200) throw new Error(`GET /v1/trial-balance: ${reply.status} ${reply.text}`);
    const off = reply.body.rows.filter((row: { openings: string }) => row.openings !== '0');
    if (reply.body.unbalanced.length > 0 || off.length > 0) this.options.findings.problem(`the trial balance is off: ${reply.text.slice(0, 500)}`);
  }
}
