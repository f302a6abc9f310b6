/**
 * Bounds of the daemon that are not settings (those are in config.ts), in one place as
 * src/constants.ts is for the kernel. Units are last in each name.
 */

// ---------------------------------------------------------------- HTTP edge

/** How often Node looks for requests past requestTimeoutMs. */
export const requestTimeoutCheckMs = 1_000;
/** Tokens the authenticator remembers at once (bounds the cache's memory). */
export const rememberedTokensMax = 10_000;
/** Longest path (with its query) a log line quotes. */
export const loggedUrlLengthMax = 256;
/** Longest path an unrouted request's refusal quotes back: a client cannot make the answer as long as its URL. */
export const unroutedPathEchoLengthMax = 200;
/** Longest `Expect` header value a refusal quotes back (an expectation is a short token). */
export const expectHeaderEchoLengthMax = 64;

// ---------------------------------------------------------------- routes

/** Alias parts are opaque strings of a prior system; bounded like any input. */
export const aliasPartLengthMax = 256;
/** A disclosure's legal obligation is named, not argued: bounded like a reference. */
export const legalObligationLengthMax = 1024;
/** Pending instructions the settlement status counts exactly; past it the count says "at least". */
export const settlementPendingCountMax = 10_000;
/** Symbol text an attestation of the embedded layer may carry (the layer's word, compared with the asset's symbol). */
export const layerSymbolLengthMax = 64;
/** A reclaim signature's text: an ed25519 signature is 128 hex characters; room past it, so a wrong one is refused as invalid, not malformed. */
export const reclaimSignatureLengthMax = 256;
/** Cursor text of an accounts page (hex of the last account key): bounds what is decoded. */
export const accountsCursorLengthMax = 256;
/** Cursor text of a grants page (hex of the last grant key). */
export const grantsCursorLengthMax = 512;
/** Cursor text of a movements page (hex of a position and a filter). */
export const movementsCursorLengthMax = 64;

// ---------------------------------------------------------------- settlement flows

/** Time an automatic intake waits for its decision before the next run may start. */
export const intakeDecisionWaitMs = 10_000;
/** Pending withdrawals read per step when expiring them: memory holds one page, however many wait. */
export const pendingWithdrawalsPageEntries = 256;

// ---------------------------------------------------------------- offline commands

/** `ledgerd check`: problems reported in full; past this many only their count grows (a badly damaged book would print forever). */
export const checkProblemsListedMax = 100;
/** `ledgerd check`: account records read per step. */
export const checkAccountPageEntries = 512;
/** Store entries a backup reads from its snapshot per step: memory holds one page, whatever the book's size. */
export const backupPageEntries = 512;
/** Entries written per batch while restoring (unsynced; the id epoch's write, last, syncs them all before the rename). */
export const restoreBatchEntries = 1_000;

/** CONTRACT 12.7: the body of POST /v1/disclosures/verify, above the daemon's bodyBytesMax (a disclosure carries its evidence). */
export const disclosureVerifyBodyBytesMax = 4 * 1024 * 1024;
