/**
 * The ONE place mapping refusal codes to HTTP statuses (CONTRACT 6). The kernel
 * knows no transport; everything the daemon answers with a code goes through here.
 */
import type { ErrorCode } from '../../src/errors.js';

const byStatus: Record<number, readonly ErrorCode[]> = {
  400: [
    'ERR-MalformedCommand',
    'ERR-QueryUnbounded',
    'ERR-ZeroAmount',
    'ERR-PrecisionExceeded',
    'ERR-UnsupportedLeg',
    'ERR-BatchTooLarge',
    'ERR-DeadlineRequired',
    'ERR-UnboundedGrant',
    'ERR-JustificationRequired',
    'ERR-DisclosureUnsupported',
  ],
  401: ['ERR-CredentialInvalid'],
  403: ['ERR-NotAuthorised', 'ERR-AuthorityRevoked', 'ERR-BoundExceeded', 'ERR-IdentityRestricted', 'ERR-ApprovalRequired'],
  404: ['ERR-UnknownAccount', 'ERR-UnknownAsset', 'ERR-UnknownOperation'],
  409: [
    'ERR-ClientKeyReused',
    'ERR-AccountFrozen',
    'ERR-AccountClosed',
    'ERR-AccountNotEmpty',
    'ERR-AssetDeprecated',
    'ERR-InsufficientAvailable',
    'ERR-AmountMismatch',
    'ERR-ReleaseUnsafe',
    'ERR-OperationTerminal',
    'ERR-InvalidTransition',
    'ERR-RecoveryNotElapsed',
    'ERR-ObservationDuplicate',
    'ERR-ObservationUnassociated',
    'ERR-EvidenceInsufficient',
    'ERR-DisclosureFalse',
    'ERR-NotDisclosable',
    'ERR-AnchorNotFinal',
    'ERR-InitialStateNotSealed',
  ],
  410: ['ERR-IdentifierArchived'],
  500: ['ERR-Internal'],
  503: ['ERR-DecisionUnavailable', 'ERR-SettlementLayerUnavailable'],
};

const statusByCode = new Map<ErrorCode, number>(
  Object.entries(byStatus).flatMap(([status, codes]) => codes.map((code) => [code, Number(status)] as const)),
);

/** The HTTP status of a refusal code. Every code of the catalogue has one (a test checks). */
export function httpStatus(code: ErrorCode): number {
  const status = statusByCode.get(code);
  if (status === undefined) throw new Error(`no HTTP status for ${code}`);
  return status;
}

/** The codes answered with `status` (CONTRACT 6). */
export function codesOfStatus(status: number): readonly ErrorCode[] {
  return byStatus[status] ?? [];
}

/** Codes answered with a `Retry-After` header (integer seconds). */
export function retriable(code: ErrorCode): boolean {
  return httpStatus(code) === 503;
}
