/**
 * The kernel's public types: its options, what it is given to submit, and what it answers.
 */
import type { Actor, Principals } from '../auth/authority.js';
import type { DirectCommand } from '../decide/decide-auth.js';
import type { IdSource } from '../model/ids.js';
import type { ApprovalPolicy } from '../auth/approvals.js';
import type { Command, Operation, OperationApproval } from '../model/model.js';
import type { IdentityId, ReferenceJson } from '../model/values.js';
import type { Store } from '../store/port.js';

export interface KernelOptions {
  readonly store: Store;
  readonly clock: () => number;
  readonly ids: IdSource;
  readonly principals?: Principals;
  /** The key challenges are MAC'd under (the daemon's, kept in its data dir); without it no challenge verifies. */
  readonly challengeMacKey?: Uint8Array;
  readonly cacheEntries?: number;
  readonly backlogMax?: number;
  /** Undecided commands one principal may hold; by default backlogCommandsPerPrincipalMax (at most `backlogMax`). */
  readonly backlogPerPrincipalMax?: number;
  /** How long a submission waits for its turn before ERR-DecisionUnavailable; by default admissionWaitDefaultMs (the daemon keeps it below its request timeout). */
  readonly admissionWaitMs?: number;
  /** fsync each write (durable acknowledgements). Only benchmarks of the difference turn it off. */
  readonly sync?: boolean;
  /** Called once when an invariant breaks; the kernel has stopped deciding. */
  readonly onFatal?: (error: Error) => void;
  /** Called for each poison found: a decision that tripped an assertion alone (its command refused with ERR-Internal). */
  readonly onPoison?: (report: PoisonReport) => void;
  /** Called when the store starts failing (the error) and when the kernel has recovered from it (null). */
  readonly onStoreFailure?: (error: Error | null) => void;
  /** The recovery terms (CONTRACT 8): the authority (default the identities principal) and the delay (default 72 h). */
  readonly recovery?: { readonly authority?: IdentityId; readonly delayMs?: number };
  /** The settlement layer as decisions need it: this deployment's instance, an instruction's lifetime in blocks, the layer's head height now. */
  readonly settlement?: KernelSettlement;
  /** The approval policy a book without one starts with (the daemon's config; CONTRACT 13). */
  readonly approvals?: ApprovalPolicy;
  /** Test seam, called before each precheck and each part of a round is decided: what it throws, they threw. Production passes none. */
  readonly beforeDecide?: (part: RoundPart) => void;
}

export interface KernelSettlement {
  readonly instance: number;
  readonly instructionExpiryBlocks: number;
  readonly layerHeight: () => number;
}

/** One part of a decision round, or a submission's precheck. */
export type RoundPart =
  | { readonly kind: 'command' | 'expiry'; readonly op: Operation }
  | { readonly kind: 'direct'; readonly command: DirectCommand }
  | { readonly kind: 'precheck'; readonly sub: Submission };

export interface PoisonReport {
  /** The operation refused (or whose expiry was given up); null for a direct decision. */
  readonly operation: string | null;
  /** The command type, or 'expiry'. */
  readonly what: string;
  readonly error: Error;
}

export interface Submission {
  readonly command: Command;
  readonly actor: Actor;
  /** The caller's client key, or null to use `requestDigest` as the derived key. */
  readonly clientKey: string | null;
  /** Lowercase hex SHA-256 identifying the request (CONTRACT 4); a reused key must match it. */
  readonly requestDigest: string;
  readonly reference: ReferenceJson | null;
  /** A member's command: the route's operationId, kept for the audit trail. */
  readonly act?: string;
  /** The act of an approved proposal (CONTRACT 13): its decision approves the proposal first. */
  readonly approval?: OperationApproval;
  /** A covered act taken directly as no other member could approve it. */
  readonly unapproved?: boolean;
}

export interface Acknowledgement {
  readonly operation: Operation;
  /** True when this is a repeat of an earlier submission under the same client key. */
  readonly repeat: boolean;
}

export interface DecisionEvent {
  readonly seq: number;
  readonly operation: Operation;
}
