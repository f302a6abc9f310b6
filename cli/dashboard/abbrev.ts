/**
 * Short forms for the dashboard on a narrow terminal: identifiers without their `did:ledger:…:`
 * prefix and the run of zeros the daemon pads sequence numbers with (`did:ledger:acct:a00…01f`
 * as `a…1f`, `op_00…7d2` as `op…7d2`), cut in the middle past a width; commands and states by
 * shorter names. The full forms are one Enter away (the operation opened whole).
 */

const didPrefix = /^did:ledger:[a-z]+:/;
/** A letter or `op_`, then the zero padding of a sequence number, then its significant hex digits. */
const padded = /^([a-z]*_?)0{4,}([0-9a-f]+)$/;

/** An identifier (account, identity, operation) in at most `width` characters. */
export function shortId(id: string, width: number): string {
  const bare = id.replace(didPrefix, '');
  const match = padded.exec(bare);
  const short = match === null ? bare : `${match[1]!.replace(/_$/, '')}…${match[2]}`;
  if (short.length <= width) return short;
  const head = Math.ceil((width - 1) / 2);
  return `${short.slice(0, head)}…${short.slice(short.length - (width - 1 - head))}`;
}

const commands: Readonly<Record<string, string>> = {
  transfer: 'xfer',
  reserve: 'reserve',
  capture: 'capture',
  release: 'release',
  withdraw: 'withdraw',
  open_account: 'open',
  create_identity: 'identity',
  register_credential: 'cred',
  issue_grant: 'grant',
  revoke_grant: 'revoke',
};

const states: Readonly<Record<string, string>> = {
  Received: 'Recvd',
  Reserved: 'Held',
  Instructed: 'Instr',
  Submitted: 'Subm',
  Completed: 'Done',
  Rejected: 'Rej',
  Expired: 'Exp',
  Captured: 'Capt',
  Released: 'Rel',
};

/** A command's type in at most 8 characters. */
export const shortCommand = (command: string): string => commands[command] ?? command.slice(0, 8);

/** An operation state in at most 5 characters. */
export const shortState = (state: string): string => states[state] ?? state.slice(0, 5);
