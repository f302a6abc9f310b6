/**
 * The ONE place mapping refusal codes to HTTP statuses (CONTRACT 6). The kernel
 * knows no transport; everything the daemon answers with a code goes through here.
 */
import type { ErrorCode } from '../../src/errors.js';

/** Every code of the catalogue, and only those: a missing or unknown code fails to compile. */
const statusByCode: Record<ErrorCode, number> = {
  'ERR-MalformedCommand': 400,
  'ERR-QueryUnbounded': 400,
  'ERR-ZeroAmount': 400,
  'ERR-PrecisionExceeded': 400,
  'ERR-UnsupportedLeg': 400,
  'ERR-BatchTooLarge': 400,
  'ERR-DeadlineRequired': 400,
  'ERR-UnboundedGrant': 400,
  'ERR-JustificationRequired': 400,
  'ERR-DisclosureUnsupported': 400,
  'ERR-CredentialInvalid': 401,
  'ERR-NotAuthorised': 403,
  'ERR-AuthorityRevoked': 403,
  'ERR-BoundExceeded': 403,
  'ERR-IdentityRestricted': 403,
  'ERR-ApprovalRequired': 403,
  'ERR-UnknownAccount': 404,
  'ERR-UnknownAsset': 404,
  'ERR-UnknownOperation': 404,
  'ERR-ClientKeyReused': 409,
  'ERR-AccountFrozen': 409,
  'ERR-AccountClosed': 409,
  'ERR-AccountNotEmpty': 409,
  'ERR-AssetDeprecated': 409,
  'ERR-InsufficientAvailable': 409,
  'ERR-AmountMismatch': 409,
  'ERR-ReleaseUnsafe': 409,
  'ERR-OperationTerminal': 409,
  'ERR-InvalidTransition': 409,
  'ERR-RecoveryNotElapsed': 409,
  'ERR-ObservationDuplicate': 409,
  'ERR-ObservationUnassociated': 409,
  'ERR-EvidenceInsufficient': 409,
  'ERR-DisclosureFalse': 409,
  'ERR-NotDisclosable': 409,
  'ERR-AnchorNotFinal': 409,
  'ERR-InitialStateNotSealed': 409,
  'ERR-IdentifierArchived': 410,
  'ERR-Internal': 500,
  'ERR-DecisionUnavailable': 503,
  'ERR-SettlementLayerUnavailable': 503,
};

/** The HTTP status of a refusal code. */
export function httpStatus(code: ErrorCode): number {
  return statusByCode[code];
}

/** The codes answered with `status` (CONTRACT 6). */
export function codesOfStatus(status: number): readonly ErrorCode[] {
  return (Object.keys(statusByCode) as ErrorCode[]).filter((code) => statusByCode[code] === status);
}

/** Codes answered with a `Retry-After` header (integer seconds). */
export function retriable(code: ErrorCode): boolean {
  return httpStatus(code) === 503;
}
