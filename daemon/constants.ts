/**
 * Bounds of the daemon that are not settings (those are in config.ts), in one place as
 * src/constants.ts is for the kernel. Units are last in each name.
 */

// ---------------------------------------------------------------- HTTP edge

/** How often Node looks for requests past requestTimeoutMs. */
export const requestTimeoutCheckMs = 1_000;
/** Tokens the authenticator remembers at once (bounds the cache's memory). */
export const rememberedTokensMax = 10_000;
/** Addresses and principals the edge's rate limits remember at once (the least recently seen are forgotten first). */
export const edgeKeysMax = 100_000;
/**
 * Requests a second a principal flooding through its refusals still gets past the edge until
 * its Retry-After has passed: enough for a client's retries to find the room that frees, few enough
 * that resending at once costs the daemon little.
 */
export const overloadedRequestsPerSecond = 64;
/** Refusals for load in one second that show a principal resending through them (a client waiting as told gets a few). */
export const floodRefusalsPerSecond = 256;
/** Longest path (with its query) a log line quotes. */
export const loggedUrlLengthMax = 256;
/** Longest path an unrouted request's refusal quotes back: a client cannot make the answer as long as its URL. */
export const unroutedPathEchoLengthMax = 200;
/** Longest `Expect` header value a refusal quotes back (an expectation is a short token). */
export const expectHeaderEchoLengthMax = 64;
/**
 * Lingering close (daemon/http/linger.ts): after a reply sent before the request was read
 * whole, what the daemon still reads and discards before it closes, and for how long at most.
 * Above any body a client would send for this API (bodyBytesMax is at most 1 MiB).
 */
export const lingerBytesMax = 8 * 1024 * 1024;
export const lingerMs = 2_000;
/** How often a lingering connection's bytes are counted against lingerBytesMax. */
export const lingerCheckMs = 50;

// ---------------------------------------------------------------- routes

/** Commands in one batch (CONTRACT 4): more, or none, is ERR-BatchTooLarge. */
export const batchCommandsMax = 1_000;
/** A batch's body (CONTRACT 4): 1,000 one-leg transfers with references fit; larger is ERR-BatchTooLarge. */
export const batchBodyBytesMax = 4 * 1024 * 1024;

/** Alias parts: the kernel's bound (genesis makes them), so a lookup takes every alias a book can hold. */
export { aliasPartLengthMax } from '../src/constants.js';
/** A disclosure's legal obligation is named, not argued: bounded like a reference. */
export const legalObligationLengthMax = 1024;
/**
 * How long a scrape of /metrics waits for the book's gauges to be read afresh (one reader at a
 * time, in the daemon's own read slot); past it the scrape answers with the last values read
 * and their age, so a stuck store never holds a scrape, nor takes more than one connection.
 */
export const metricsBookReadWaitMs = 1_000;
/** Pending instructions the settlement status counts exactly; past it the count says "at least". */
export const settlementPendingCountMax = 10_000;
/** Symbol text an attestation of the embedded layer may carry (the layer's word, compared with the asset's symbol). */
export const layerSymbolLengthMax = 64;
/** A reclaim signature's text: an ed25519 signature is 128 hex characters; room past it, so a wrong one is refused as invalid, not malformed. */
export const reclaimSignatureLengthMax = 256;
/** Cursor text of an accounts page (hex of the last account key, then its MAC): bounds what is decoded. */
export const accountsCursorLengthMax = 256;
/** A trial-balance lines cursor: an account id and an asset symbol as hex, and the MAC. */
export const trialBalanceCursorLengthMax = 512;
/** Cursor text of a grants page (hex of the next grant key, then its MAC). */
export const grantsCursorLengthMax = 512;
/** Cursor text of an operator listing's page (hex of the last key it read, then its MAC). */
export const opsCursorLengthMax = 512;
/** Cursor text of a movements page (hex of a position and a filter, then its MAC). */
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
/** `ledgerd migrate`: keys read per step of the pass that counts a layout-1 book's entries before migrating it (for its time left). */
export const migrateCountPageEntries = 10_000;
/** Progress of long offline work (init --genesis, migrate, check, restore) on a terminal: redrawn at most this often, so drawing costs the work nothing measurable. */
export const progressRedrawMs = 100;
/** Entries written per batch while restoring (unsynced; the id epoch's write, last, syncs them all before the rename). */
export const restoreBatchEntries = 1_000;

// ---------------------------------------------------------------- genesis file (docs/daemon.md, Input bounds)

/** Characters of one string, member name or number in a genesis file: the longest a valid one holds is an alias part (256). */
export const genesisValueCharsMax = 4_096;
/** Characters of one entry of a genesis file, every value and mark counted: room for a treasury's limits in each of 4 096 assets. */
export const genesisEntryCharsMax = 1 << 20;
/** Levels of objects and arrays in one entry: the entry, and an account's `treasury_limits` in it. */
export const genesisEntryDepthMax = 2;

/**
 * Longest line of a backup a restore reads (and a backup writes): past it the file is
 * refused (exit 3) before memory grows with the line. Each line is one store entry; the
 * largest the daemon writes (a journal chunk of journalChunkEntriesMax leaves, each with a
 * reference of at most referenceBytesMax) is a small fraction of it.
 */
export const backupLineBytesMax = 64 * 1024 * 1024;
/** `ledgerd check`: operation references deciphered under the data dir's daemon.key (any one drawn under another key tells). */
export const checkOperationRefsMax = 256;

/** CONTRACT 12.7: the body of POST /v1/disclosures/verify, above the daemon's bodyBytesMax (a disclosure carries its evidence). */
export const disclosureVerifyBodyBytesMax = 4 * 1024 * 1024;

// ---------------------------------------------------------------- systemd

/** How long one systemd-notify may take (it waits for PID 1 to have read the message) before it is killed. */
export const notifyTimeoutMs = 10_000;
