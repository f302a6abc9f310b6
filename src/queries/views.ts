/** The spec's read models and replies, rendered from the book's records. */
import type { Account, Asset, Authority, Balance, Operation, Posting } from '../model/model.js';
import { terminalStates } from '../model/model.js';
import { assert } from '../assert.js';
import type { AccountsPage, MovementsPage, Statement, TrialBalance, TrialBalanceLines } from './queries.js';
import { totalMinor } from '../book/totals.js';
import { RawJson, type Wire } from './wire.js';
import { type RecoveryTerms, mechanismWire } from '../custody/terms.js';
import type { IdentityId } from '../model/values.js';
import { depositRefOf } from '../settlement/book.js';

const raw = (text: string | null): RawJson | undefined => (text === null ? undefined : new RawJson(text));

function resultWire(op: Operation): Wire | undefined {
  if (op.result === null) return undefined;
  return {
    account: op.result.account,
    identity: op.result.identity,
    party: op.result.party,
    credential: op.result.credential,
    grant: op.result.grant,
    pending: op.result.pending,
    effective_at: op.result.effectiveAtMs,
    postings: op.result.postings ? [...op.result.postings] : undefined,
    settlement: op.result.settlement as Wire | undefined,
    proposal: op.result.proposal,
  };
}

/** Whether `op` registers an API key, whose replies carry `api_key` (CONTRACT 5). */
function registersApiKey(op: Operation): boolean {
  const c = op.command;
  return (c.type === 'create_identity' || c.type === 'register_credential') && c.credential.scheme === 'api-key';
}

export function isTerminal(op: Operation): boolean {
  return terminalStates.has(op.state);
}

/**
 * The command reply (spec 2.1). `apiKey` is set only on the one deciding reply that
 * carries it; every other reply to an API-key registration says `api_key: null`.
 */
export function commandReply(op: Operation, apiKey: string | null = null): Wire {
  const terminal = isTerminal(op);
  return {
    client_key: op.clientKey,
    client_key_derived: op.clientKeyDerived,
    operation_reference: op.ref,
    terminal,
    class: terminal ? 'terminal' : undefined,
    state: op.state,
    reference: raw(op.reference),
    api_key: registersApiKey(op) ? apiKey : undefined,
    result: resultWire(op),
  };
}

/**
 * What a command asks to move, for people watching the book (the dashboard): a transfer's
 * legs, a reservation's hold (`to` null). Seen only by whoever sees the operation.
 */
function movesOf(command: Operation['command']): Wire[] | undefined {
  switch (command.type) {
    case 'transfer':
      return command.legs.map((leg) => ({ from: leg.from, to: leg.to, amount: leg.amountMinor.toString(), asset: leg.asset }));
    case 'reserve':
      return [{ from: command.payer, to: null, amount: command.amountMinor.toString(), asset: command.asset }];
    case 'withdraw':
      return [{ from: command.account, to: null, amount: command.amountMinor.toString(), asset: command.asset }];
    default:
      return undefined;
  }
}

/** The operation view (CONTRACT 4, plus who submitted it, with which credential, for whom, and what it moves), also the payload of `operation` events. */
export function operationView(op: Operation): Wire {
  return {
    operation_reference: op.ref,
    command: op.command.type,
    principal: op.actor.principal,
    credential: op.actor.credential,
    on_behalf_of: op.actor.onBehalfOf ?? undefined,
    moves: movesOf(op.command),
    // When a transfer or withdrawal must be decided by, or a reservation's hold expires.
    deadline: 'deadlineMs' in op.command ? op.command.deadlineMs : undefined,
    state: op.state,
    terminal: isTerminal(op),
    submitted_at: op.submittedAtMs,
    decided_at: op.decidedAtMs,
    client_key: op.clientKey,
    reference: raw(op.reference),
    result: resultWire(op),
    error: op.error === null ? undefined : { error: op.error.error, description: op.error.description },
  };
}

/** A live hold as the operator's listing shows it (GET /v1/ops/reservations): a Reserved operation's hold and who holds it. */
export function reservationView(op: Operation): Wire {
  assert(op.state === 'Reserved' && op.hold !== null, 'a listed reservation holds value');
  const hold = op.hold;
  return {
    operation_reference: op.ref,
    payer: hold.payer,
    amount: hold.amountMinor.toString(),
    asset: hold.asset,
    deadline: hold.deadlineMs,
    holder: op.actor.principal,
    credential: op.actor.credential,
    on_behalf_of: op.actor.onBehalfOf,
    reserved_at: op.decidedAtMs ?? op.submittedAtMs,
    reference: raw(op.reference),
  };
}

export function authorityView(a: Authority): Wire {
  return { credential: a.credential, grant: a.grant, kind: a.kind, on_behalf_of: a.onBehalfOf, principal: a.principal };
}

export function movementView(p: Posting): Wire {
  return {
    account: p.account,
    amount: p.amountMinor.toString(),
    asset: p.asset,
    at: p.atMs,
    authorities: p.authorities.map(authorityView),
    balance: p.layer,
    counterparty: p.counterparty,
    direction: p.direction,
    kind: p.kind,
    operation: p.operation,
    reference: raw(p.reference),
    seq: p.seq,
    status: p.status,
  };
}

export function balanceView(b: Balance): { available: string; encumbered: string; reserved: string } {
  return { available: b.available.toString(), encumbered: b.encumbered.toString(), reserved: b.reserved.toString() };
}

export function accountView(a: Account): Wire {
  return {
    account: a.id,
    closed: a.status === 'closed',
    custody: a.custody,
    kind: a.kind,
    status: a.status,
    opened_at: a.openedAtMs,
    owner: a.owner,
    deposit_ref: depositRefOf(a.id),
  };
}

/** An account's balances in every asset it has held, at `view` (CONTRACT 11). */
export function accountBalancesView(a: Account, view: number, balances: readonly { asset: string; balance: Balance }[]): Wire {
  return { account: a.id, view, balances: balances.map(({ asset, balance }) => ({ asset, ...balanceView(balance) })) };
}

export function accountsPageView(page: AccountsPage): Wire {
  return { items: page.items.map(accountView), next: page.next ?? undefined, view: page.view };
}

/**
 * The custody view (spec 2.8, endpoint 22): `epoch` counts completed custody changes,
 * `successor` names the new owner of a pending succession, `changes` the account's
 * recoveries and successions, oldest first.
 */
export function custodyView(a: Account): Wire {
  const changes = a.changes ?? [];
  const succession = changes.find((c) => c.state === 'pending' && c.kind === 'succession');
  return {
    account: a.id,
    custody: a.custody,
    epoch: a.epoch,
    owner: a.owner,
    successor: succession?.newOwner ?? null,
    changes: changes.map((c) => ({ effective_at: c.effectiveAtMs, initiated_at: c.initiatedAtMs, kind: c.kind, pending: c.pending, state: c.state })),
  };
}

/** Recovery mechanisms (endpoint 17), and with `identity` the recovery terms (CONTRACT 8). */
export function mechanismsView(terms: RecoveryTerms, identity?: IdentityId): Wire {
  return { identity, digest: terms.digest, mechanisms: terms.mechanisms.map(mechanismWire) };
}

export function assetView(a: Asset): Wire {
  return { id: a.id, kind: a.kind, precision: a.precision, status: a.status, binding: a.binding, location: a.location };
}

export function statementView(s: Statement): Wire {
  return {
    account: s.account,
    asset: s.asset,
    closed: s.closed,
    from: s.fromMs,
    to: s.toMs,
    from_seq: s.fromSeq,
    to_seq: s.toSeq,
    opening: balanceView(s.opening),
    closing: balanceView(s.closing),
    movements: s.movements.map(movementView),
  };
}

export function movementsPageView(page: MovementsPage): Wire {
  return { movements: page.movements.map(movementView), next: page.next ?? undefined, view: page.view };
}

/** A trial-balance row with its debits and credits (positive sums of the balances below and above zero). */
export function grossView<Row extends object>(row: Row, gross: { debitsMinor: bigint; creditsMinor: bigint } | undefined): Row & { debits: string; credits: string } {
  return { ...row, debits: (gross?.debitsMinor ?? 0n).toString(), credits: (gross?.creditsMinor ?? 0n).toString() };
}

/** A page of the trial balance's lines; `seal` makes the wire cursor of the last position read. */
export function trialBalanceLinesView(page: TrialBalanceLines, seal: (next: string) => string): Wire {
  return {
    items: page.items.map((l) => ({ account: l.account, asset: l.asset, ...balanceView(l.layers), balance: totalMinor(l.layers).toString() })),
    next: page.next === null ? undefined : seal(page.next),
    view: page.view,
  };
}

export function trialBalanceView(tb: TrialBalance) {
  return {
    accounts: tb.accounts,
    rows: tb.rows.map((r) => ({ asset: r.asset, openings: r.openingsMinor.toString(), layers: balanceView(r.layers) })),
    unbalanced: tb.unbalanced.map((u) => ({ currency: u.currency, layer: u.layer })),
    view: tb.view,
  };
}
