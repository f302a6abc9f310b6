/**
 * The one catalogue of refusal codes (spec 7). Each code carries the default
 * description used when a refusal has nothing more specific to say. HTTP statuses
 * live in one place in the daemon (daemon/http/status.ts), not here: the kernel knows
 * no transport. Business refusals are values (`Refusal`); `Refused` wraps one for the
 * edges that report by throwing.
 */
export const errorCatalogue = {
  'ERR-NotAuthorised': 'the initiating principal holds no authority that covers the operation, account, asset or bound',
  'ERR-AuthorityRevoked': 'the grant this authority rests on was revoked',
  'ERR-CredentialInvalid': 'the credential or bearer token is missing, unknown, expired or invalid',
  'ERR-RecoveryNotElapsed': 'the recovery delay has not elapsed',
  'ERR-UnboundedGrant': 'a delegated grant must carry a bound and may not widen its parent',
  'ERR-BoundExceeded': 'the operation exceeds a bound of the authority it rests on',
  'ERR-UnknownAccount': 'no such account is reachable by the caller',
  'ERR-AccountFrozen': 'the account is frozen',
  'ERR-AccountClosed': 'the account is closed',
  'ERR-AccountNotEmpty': 'the account still holds value',
  'ERR-IdentityRestricted': 'the identity is restricted',
  'ERR-UnknownAsset': 'no such asset is registered',
  'ERR-AssetDeprecated': 'the asset is deprecated and takes no new movements',
  'ERR-PrecisionExceeded': 'the amount exceeds what the asset can carry',
  'ERR-ZeroAmount': 'the amount is zero',
  'ERR-InsufficientAvailable': 'the available balance does not cover the amount',
  'ERR-AmountMismatch': 'a check on the settlement path detected an amount mismatch',
  'ERR-ReleaseUnsafe': 'releasing now would be unsafe',
  'ERR-OperationTerminal': 'the operation is already in a terminal state',
  'ERR-InvalidTransition': 'the operation cannot make that transition from its current state',
  'ERR-UnknownOperation': 'no such operation is visible to the caller',
  'ERR-DeadlineRequired': 'a deadline is required',
  'ERR-ClientKeyReused': 'the client key was already used for a different request',
  'ERR-BatchTooLarge': 'the command carries more entries than allowed',
  'ERR-UnsupportedLeg': 'a leg of the transfer is not supported',
  'ERR-SettlementLayerUnavailable': 'the settlement layer is unavailable',
  'ERR-DecisionUnavailable': 'the service cannot take decisions right now; retry with the same client key',
  'ERR-ObservationDuplicate': 'that coordinate was observed before',
  'ERR-ObservationUnassociated': 'the record relates to nothing held',
  'ERR-EvidenceInsufficient': 'the evidence is insufficient',
  'ERR-JustificationRequired': 'a justification is required',
  'ERR-ApprovalRequired': 'an approval is required',
  'ERR-DisclosureUnsupported': 'that disclosure assertion is not supported',
  'ERR-DisclosureFalse': 'the asserted statement does not hold',
  'ERR-NotDisclosable': 'that fact is not disclosable',
  'ERR-AnchorNotFinal': 'the checkpoint is not final',
  'ERR-QueryUnbounded': 'the query is unbounded',
  'ERR-MalformedCommand': 'the request is malformed',
  'ERR-InitialStateNotSealed': 'the initial state is not sealed yet',
  'ERR-IdentifierArchived': 'that identifier belongs to a prior system and was archived',
  'ERR-Internal': 'an internal error occurred',
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

export const errorCodes = Object.keys(errorCatalogue) as ErrorCode[];

export interface Refusal {
  readonly error: ErrorCode;
  readonly description: string;
}

export function refusal(error: ErrorCode, description?: string): Refusal {
  return { error, description: description ?? errorCatalogue[error] };
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(errorCatalogue, value);
}

/**
 * A refusal raised through an edge that reports by throwing (parsers, submission checks).
 * It carries no stack trace: a refusal is an answer, not a fault, nothing reads its
 * stack, and capturing one was a measured cost where the kernel refuses on hot paths
 * (a submitter turned away at the backlog bound, intake refusals; docs/performance.md).
 */
export class Refused extends Error {
  readonly refusal: Refusal;
  constructor(error: ErrorCode, description?: string) {
    const r = refusal(error, description);
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(`${r.error}: ${r.description}`);
    Error.stackTraceLimit = stackTraceLimit;
    this.refusal = r;
  }
}
Refused.prototype.name = 'Refused';

export function refuse(error: ErrorCode, description?: string): never {
  throw new Refused(error, description);
}
