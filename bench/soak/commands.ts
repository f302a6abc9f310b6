/**
 * The soak's commands and what it knows of each: every command is sent by the customer
 * owning the account it debits, under a client key and a reference of its own, and is
 * kept here with the outcome its sender saw (acknowledged, refused, or unknown when the
 * reply was lost to a kill) and, once verified, the state the book decided.
 */

/** As the operation view names the command (`command`). */
export type CommandKind = 'transfer' | 'reserve' | 'capture' | 'release';

/** Operation states a decision leaves (CONTRACT 4); `Received` is not among them. */
export const decidedStates = new Set(['Completed', 'Rejected', 'Expired', 'Reserved', 'Captured', 'Released']);

export interface SoakCommand {
  /** Its number in the run: the client key and the reference are made of it. */
  readonly n: number;
  readonly kind: CommandKind;
  /** The customer (by name) who sends it. */
  readonly sender: string;
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly clientKey: string;
  readonly reference: { readonly soak: number };
  /** For a capture: whether it takes the whole reservation (2 postings) or part (4: capture, release of the rest). */
  readonly capturesAll?: boolean;
  /** What the sender saw: a reply carrying the operation, a refusal, or nothing (the kill took the reply). */
  outcome: 'acknowledged' | 'refused' | 'unknown';
  operationRef: string | null;
  /** The decided state once verified (null before), and the decision's error code if rejected. */
  state: string | null;
  error: string | null;
}

export const customerAccount = (name: string) => `did:ledger:acct:${name}`;

/**
 * The number of postings a decided command itself appends (the movements the API
 * attributes to its operation): a one-leg transfer or a reservation 2, a release 2,
 * a capture 2 or 4 (a partial one releases the rest), anything rejected or expired 0.
 */
export function ownPostingsOf(command: SoakCommand): number {
  if (command.state === 'Rejected' || command.state === 'Expired') return 0;
  return command.kind === 'capture' && command.capturesAll === false ? 4 : 2;
}

/** A small seeded generator (mulberry32), so a run's choice of commands can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The largest transfer is a fifth of a customer's funding: after some wandering, an
 * account's available balance (less what its open reservations hold) falls short now and
 * then. Reservations take at most a quarter of that, as they hold value until finished.
 */
const transferShareOfFunding = 5n;
const reservationShareOfTransfer = 4n;

export interface CommandSource {
  /** A new command: a transfer, a reservation, or a capture or release of a reservation still open. */
  next(): SoakCommand;
  /** A reservation the book holds as Reserved, to be captured or released later (once). */
  offerReservation(reservation: SoakCommand): void;
  readonly all: readonly SoakCommand[];
}

/**
 * Commands among `customers`, each funded with `fundingMinor`: transfers (some above
 * the sender's available balance, so rejected in the decision), reservations, and
 * captures (whole or part) and releases of reservations offered back once reserved.
 */
export function commandSource(customers: readonly string[], fundingMinor: bigint, random: () => number, runTag: string): CommandSource {
  const all: SoakCommand[] = [];
  const open: SoakCommand[] = [];
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const amount = (maxMinor: bigint) => 1n + BigInt(Math.floor(random() * Number(maxMinor)));
  const make = (kind: CommandKind, sender: string, path: string, fields: Record<string, unknown>, capturesAll?: boolean): SoakCommand => {
    const n = all.length;
    const reference = { soak: n };
    const command: SoakCommand = { n, kind, sender, path, body: { ...fields, reference }, clientKey: `soak-${runTag}-${n}`, reference, capturesAll, outcome: 'unknown', operationRef: null, state: null, error: null };
    all.push(command);
    return command;
  };
  const transferMaxMinor = fundingMinor / transferShareOfFunding;
  const other = (name: string) => pick(customers.filter((c) => c !== name));
  return {
    all,
    offerReservation: (reservation) => void open.push(reservation),
    next: () => {
      const roll = random();
      if (open.length > 0 && roll < 0.35) {
        const reservation = open.splice(Math.floor(random() * open.length), 1)[0]!;
        const path = `/v1/reservations/${reservation.operationRef}`;
        if (random() < 0.3) return make('release', reservation.sender, `${path}/release`, {});
        const reservedMinor = BigInt(reservation.body.amount as string);
        const part = amount(reservedMinor);
        const to = customerAccount(other(reservation.sender));
        return part === reservedMinor ? make('capture', reservation.sender, `${path}/capture`, { to }, true) : make('capture', reservation.sender, `${path}/capture`, { to, amount: part.toString() }, false);
      }
      const sender = pick(customers);
      if (roll < 0.5) return make('reserve', sender, '/v1/reservations', { amount: amount(transferMaxMinor / reservationShareOfTransfer).toString(), asset: 'USD', payer: customerAccount(sender) });
      return make('transfer', sender, '/v1/transfers', { legs: [{ amount: amount(transferMaxMinor).toString(), asset: 'USD', from: customerAccount(sender), to: customerAccount(other(sender)) }] });
    },
  };
}
