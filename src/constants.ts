/**
 * Every bound the kernel enforces, in one place (TigerBeetle's constants.zig is the model).
 * Units are last in each name. The relations between bounds are checked at load.
 */
import { assert } from './assert.js';
import { grantsGivenMax } from './auth/constants.js';

/** Client-key length in characters (spec 8). */
export const clientKeyLengthMax = 256;
/** Pass-through `reference`, bytes of UTF-8 as sent (spec 8). */
export const referenceBytesMax = 1024;
/** Identifier `<id>` part length (CONTRACT 3). */
export const idLengthMax = 64;
/** Asset symbol length (CONTRACT 3). */
export const symbolLengthMax = 16;
/** An asset's precision, in decimal places (kept beside the major-units writer, which ledgerctl loads without this module). */
export { assetPrecisionMax } from './major-units.js';
/** Operation reference length in characters: past any reference the kernel makes, so a longer one is malformed without a lookup. */
export const operationRefLengthMax = 128;
/** Largest amount an asset can carry: 2^128 - 1 (CONTRACT 3). */
export const amountMinorMax = (1n << 128n) - 1n;
/** Decimal digits of amountMinorMax: a longer digit string is over it without parsing. */
export const amountDigitsMax = amountMinorMax.toString().length;

/** Legs in one transfer; more is ERR-BatchTooLarge. */
export const transferLegsMax = 64;
/** Movements in one page (spec 8). */
export const movementsPageLimitMax = 1000;
/** Movements in one statement period (spec 8). */
export const statementMovementsMax = 1000;
/** Index entries one movements page may scan before it returns with `next`. */
export const movementsScanMax = 4 * movementsPageLimitMax;
/** Index entries a movements read takes from its merged indexes at a time (at most movementsScanMax in all). */
export const movementsScanChunkEntries = 256;
/** (Account, asset) indexes one movements read may merge. */
export const movementsMergeMax = 1024;
/** Accounts one identity may own open (not closed: CONTRACT 8, closed ones do not count). */
export const accountsPerIdentityMax = 256;
/** Accounts, closed ones included, one identity's record lists (bounds the record and a movements-by-identity read). */
export const accountsKeptPerIdentityMax = 4 * accountsPerIdentityMax;
/** Custody changes (recoveries, successions) an account keeps for its custody view; older finished ones are dropped. */
export const custodyChangesKeptMax = 64;
/** Recovery delay (CONTRACT 8: `recovery.delayMs`), default 72 h, at most a year. */
export const recoveryDelayDefaultMs = 72 * 3600 * 1000;
export const recoveryDelayMaxMs = 366 * 24 * 3600 * 1000;
/** Registered assets. */
export const assetsMax = 4096;
/** Balances the trial balance's debits and credits read (every one, in one view); a larger book is refused them (ERR-QueryUnbounded). */
export const trialBalanceGrossBalancesMax = 100_000;
/** Balances one page of the trial balance's lines reads, per line asked for (an asset filter skips the others). */
export const trialBalanceLinesScanFactor = 16;
/** Integrating parties in the book (their listing, GET /v1/ops/integrating-parties, is one page). */
export const integratingPartiesMax = 1024;
/** Member records of the operator principal, removed ones included (CONTRACT 13; GET /v1/ops/members is one page). */
export const membersMax = 256;
/** Open proposals one member may hold at once (CONTRACT 13). */
export const proposalsOpenPerMemberMax = 64;
/** Proposals a filtered page of the listing reads at most (it then answers fewer, with `next`). */
export const proposalScanMax = 10_000;
/** Proposals a listing page holds at most. */
export const proposalPageMax = 200;
/** Audit items one page of GET /v1/ops/audit answers, and reads when filtered by member (CONTRACT 13). */
export const auditPageMax = 1000;
export const auditScanMax = 10_000;
/** Principals tied to one integrating party. */
export const partyPrincipalsMax = 16;
/** Grants one grant listing answers (GET /v1/identities/{identity}/grants, /v1/accounts/{account}/grants). */
export const grantsListedMax = 1000;
/** Index entries one grant listing page reads at most (a page may hold fewer than its limit and still carry `next`). */
export const grantsListScanMax = 4 * grantsListedMax;
/** Grant records a listing reads per store round trip (at most grantsListScanMax in all): bounds what one read holds and decodes. */
export const grantsListChunkEntries = 256;
/** Items one page of an operator listing answers (GET /v1/ops/identities, accounts, operations, reservations, grants). */
export const opsListingPageMax = 1000;
/** Records one page of an operator listing reads at most: a filter that matches little returns fewer items, with `next` to resume. */
export const opsListingScanMax = 4 * opsListingPageMax;
/** Records an operator listing reads per store round trip (at most opsListingScanMax in all). */
export const opsListingChunkEntries = 256;
/** Treasury limit entries on one account. */
export const treasuryLimitsMax = assetsMax;

/**
 * Commands accepted but not yet decided; past this, submissions get
 * ERR-DecisionUnavailable. At the measured ~7,000 decisions/s this is ~7 s of waiting,
 * well inside the default transfer deadline, so backpressure comes before expiry.
 */
export const backlogCommandsMax = 50_000;
/**
 * One principal's share of the backlog: it may hold at most 1/backlogShareDivisor of
 * the backlog's bound undecided, so one caller flooding leaves the rest to the others
 * (a quiet principal is still served). The daemon derives the share of its configured
 * bound the same way.
 */
export const backlogShareDivisor = 8;
export const backlogCommandsPerPrincipalMax = backlogCommandsMax / backlogShareDivisor;
/**
 * Commands of one principal accepted and not yet decided at once (intake.ts): its
 * further commands wait in its own queue and are taken in turn with everyone else's,
 * so another principal's command is never behind more than this many of a flood's.
 * A quarter of a decision round: a principal alone still fills rounds back to back.
 */
export const admittedPerPrincipalMax = 1024;
/** How long a submission waits for its turn (its principal's admitted commands at their bound) before ERR-DecisionUnavailable, by default. */
export const admissionWaitDefaultMs = 5_000;
/** Submissions made durable by one write (group commit). */
export const submissionsPerWriteMax = 4096;
/** Decisions made durable by one write (group commit). */
export const decisionsPerWriteMax = 4096;
/** Direct decisions (challenges, sign-ins) in one write. */
export const directDecisionsPerWriteMax = 1024;
/** Reservation expiries decided in one write, ahead of the commands in it. */
export const expiriesPerWriteMax = 1024;
/**
 * Events in one event chunk (`ev/`): a round writes its events in chunks of at most this
 * many. The chunk is where each decided operation's state is stored (layout 5), and reading
 * one operation reads its whole chunk (model/event-chunk.ts), so this bounds that read.
 */
export const eventChunkEventsMax = 16;
/**
 * Items in one chunk of layout 7's small records (the audit trail `au/`, the operations
 * index `ot/`: model/compact-chunk.ts), and the characters of its items at most (a longer
 * single item, a long justification, is a chunk alone): a write makes as many chunks as it
 * needs, and a listing reads a chunk whole, so these bound that read.
 */
export const compactChunkItemsMax = 64;
export const compactChunkCharsMax = 8 * 1024;

/** Default deadlines (CONTRACT 4), overridable in the daemon's config. */
export const transferDeadlineDefaultMs = 30_000;
export const reservationDeadlineDefaultMs = 7 * 24 * 3600 * 1000;
/** A deadline further out than this is refused as malformed (a year). */
export const deadlineHorizonMaxMs = 366 * 24 * 3600 * 1000;

/** How often a round also prunes expired challenges and sessions. */
export const authPruneIntervalMs = 1000;
/** How long the kernel waits, after a failed store write, before it reopens the store and tries again. */
export const retryAfterWriteFailureMs = 1000;
/**
 * How long a decision round's write, when no write is in flight or the write it queued
 * behind is done, waits for an intake write to join it (src/book/group-commit.ts):
 * together they take one fsync, and an
 * acknowledgement never waits for a decision write and then its own. A decision is
 * announced at most this much later.
 */
export const decisionWriteJoinWaitMs = 2;

/** Entries in the kernel's read cache of accounts, identities and balances. */
export const cacheEntriesDefault = 100_000;
export const cacheEntriesMin = 1024;
/**
 * LevelDB's own memory, besides the cache above (LevelDB's defaults, stated here): table
 * files held open, each with its index block and (64-bit) mapped into memory, so the
 * pages of it a read touches count in the resident set as file-backed, reclaimable
 * memory (docs/performance.md, A book of 10^7 postings); and the cache of uncompressed blocks.
 */
export const levelOpenFilesMax = 1000;
export const levelBlockCacheBytes = 8 * 1024 * 1024;
/**
 * LevelDB's write buffer (its memtable; up to two are held, one being flushed). LevelDB's
 * own 4 MiB makes level-0 tables of ~1 MiB, each merged with the whole of level 1 (10 MiB)
 * since every round's keys span the key space: measured 14x write amplification, the
 * busiest thread of a loaded daemon. 64 MiB cuts the CPU per acknowledged transfer by
 * ~13-22% under steady HTTP load (docs/performance.md, LevelDB's write buffer); the cost
 * is memory and up to ~0.35 s more to reopen after a crash (the log replayed).
 */
export const levelWriteBufferBytes = 64 * 1024 * 1024;
/**
 * A LevelDB read of at most this many keys is made on the calling thread (`getSync`: ~1-4 µs
 * a key from the memtable or the block cache) rather than on libuv's pool, whose round trip
 * (a thread woken, then the event loop) costs ~18-24 µs of CPU whatever the keys: below
 * saturation intake's client-key lookup and the decider's reads are a key or two per round
 * (docs/performance.md, Acknowledgements below saturation). Bounded so that a read that misses
 * the caches blocks the event loop for a few disk reads at most; larger reads stay on the pool.
 */
export const levelSyncReadKeysMax = 8;

/**
 * Alias and archived-identifier parts (source, name): 1 to this many of `[A-Za-z0-9._:@/+-]`
 * (ids' characters and the separators prior systems' identifiers use; nothing a terminal
 * or a log line would act on). Genesis makes them; lookups take at most this many too.
 */
export const aliasPartLengthMax = 256;
/** Genesis: entries of each kind, and entries written per batch while importing. */
export const genesisEntriesMax = 10_000_000;
export const genesisEntriesPerWrite = 10_000;
/** Genesis entries whose reference checks are read in one `getMany` while importing (each names at most two keys). */
export const genesisEntriesPerRead = 2_000;
/**
 * Genesis: bits of the filter of keys the import has written in the section it reads
 * (book/genesis-filter.ts), 16 MiB, and its probes per key: ~0.4% false positives at
 * genesisEntriesMax keys, each costing one store read.
 */
export const genesisKeyFilterBits = 2 ** 27;
export const genesisKeyFilterProbes = 6;
/**
 * Genesis: accounts an identity's record may hold and still be rewritten whole when a
 * batch adds to it; past this, the accounts it gets go to scratch entries merged into the
 * record once, after the accounts section (book/genesis.ts), so no record is rewritten
 * more than this many times.
 */
export const genesisIdentityRewriteAccountsMax = 1024;
/** Journal entries per chunk: a round (or genesis) writes its entries in chunks of at most this many. */
export const journalChunkEntriesMax = 4096;
/** `ledgerd migrate`: store entries read per page of the old book and written per (unsynced) batch of the new one. */
export const migrateEntriesPerWrite = 1_000;

/** Treasury limit of the embedded default treasury accounts, minor units. */
export const defaultTreasuryLimitMinor = 10n ** 24n;

/** The embedded settlement layer (src/settlement/embedded.ts). */
/** Blocks one request (or one tick) may make at once: one write. */
export const layerBlocksPerRequestMax = 1000;
/** Items one block carries; the rest wait for the next. */
export const layerBlockItemsMax = 1000;
/** Items waiting for a block; past it the layer refuses more (ERR-SettlementLayerUnavailable). */
export const layerMempoolItemsMax = 100_000;
/** Blocks and inbox records one read returns. */
export const layerBlocksReadMax = 1000;
export const layerInboxReadMax = 1000;
/** Asset locations the embedded layer knows. */
export const layerLocationsMax = 10_000;
/** How long the embedded layer's status declaration holds (its `fresh_until` less `declared_at`). */
export const layerStatusFreshMs = 10_000;
/** Blocks one `settle` command takes in (the daemon reads them at most this many at a time). */
export const settleBlocksPerCommandMax = 16;
/** Items (deposits, instructions, expiries, attestations) past which the daemon takes no further block into one `settle` (whole blocks: at most this plus one block's). */
export const settleItemsPerCommandMax = 1000;
/** Withdrawals one account may have pending (Instructed or Submitted): one caller cannot fill the layer's mempool for everyone. */
export const pendingWithdrawalsPerAccountMax = 100;
/** Withdrawals past their expiry one `settle` command expires. */
export const settleDuePerCommandMax = 1000;
/** Inbox positions one rescan covers. */
export const rescanSeqsMax = layerInboxReadMax;

/** Checkpoints (src/checkpoints/). Perfect Merkle subtrees of at least 2^this leaves are stored, so an inclusion proof reads at most 2^this leaves. */
export const merkleStoredLevelMin = 8;
/** Liabilities trees (CONTRACT 12.2): leaves are stored in blocks of this many (one read gives a proof's lowest levels), nodes above them one by one. */
export const liabilitiesBlockLeaves = 256;
/** A liabilities tree's balances are read in slices of this many; its records are written in batches of this many. */
export const liabilitiesSliceLeaves = 2048;
/** The longest a liabilities tree's build holds the event loop (the decider's thread) before it serves it: a decision round's step waits no longer. */
export const liabilitiesSliceMs = 2;
/** A liabilities tree's worker sends its records in batches of `liabilitiesSliceLeaves`, at most this many sent and not yet written (its memory for them is bounded). */
export const liabilitiesBatchesUnwritten = 2;
/** Checkpoints one listing page holds. */
export const checkpointsPageMax = 1000;
export const checkpointsPageDefault = 100;
/** Checkpoints waiting for the settlement layer (pending or submitted); past it a new one is refused (ERR-SettlementLayerUnavailable). */
export const checkpointsUnfinishedMax = 1000;
/** Journal entries one disclosure's evidence holds; past it ERR-NotDisclosable (name a narrower fact). */
export const disclosureEvidenceMax = 100;
/** Entries of the subject a flows_bound disclosure reads in its range; past it ERR-NotDisclosable. */
export const disclosureScanEntriesMax = 10_000;

assert(movementsScanMax >= movementsPageLimitMax, 'a page must be able to fill');
assert(opsListingScanMax >= opsListingPageMax && opsListingPageMax === movementsPageLimitMax, 'an operator listing page can fill, and its limit parses like a movements limit');
assert(grantsListScanMax >= grantsListedMax && grantsListedMax <= movementsPageLimitMax, 'a grant listing page can fill, and its limit parses like a movements limit');
assert(grantsGivenMax <= grantsListedMax, 'the live grants one principal gave fit one listing page');
assert(decisionsPerWriteMax <= backlogCommandsMax, 'a write cannot exceed the backlog');
assert(backlogCommandsMax / 5_000 < transferDeadlineDefaultMs / 1000, 'a full backlog drains within the default transfer deadline at a modest decision rate');
assert(submissionsPerWriteMax <= backlogCommandsMax, 'a write cannot exceed the backlog');
assert(Number.isSafeInteger(backlogCommandsPerPrincipalMax) && backlogCommandsPerPrincipalMax * backlogShareDivisor <= backlogCommandsMax && backlogShareDivisor >= 2, 'one principal holds at most a fraction of the backlog');
assert(expiriesPerWriteMax <= decisionsPerWriteMax, 'expiries share a write with decisions');
assert(cacheEntriesDefault >= cacheEntriesMin, 'default cache within bounds');
assert(defaultTreasuryLimitMinor <= amountMinorMax, 'treasury limit is an amount');
assert(layerBlocksPerRequestMax * layerBlockItemsMax >= layerMempoolItemsMax, 'one request of blocks can empty a full mempool');
assert(checkpointsPageMax === movementsPageLimitMax && checkpointsPageDefault <= checkpointsPageMax, 'a checkpoint page limit parses like a movements limit');
assert(disclosureEvidenceMax <= disclosureScanEntriesMax, 'the evidence is drawn from the entries read');
