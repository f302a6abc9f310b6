/** Every bound the CLI applies, in one place. Units are last in each name. */

/** Connecting to the service. */
export const connectTimeoutMs = 5_000;
/**
 * `--timeout-ms`: default and largest bound of a whole command: its requests (an event stream's
 * headers, not its quiet body), a submission's attempts and the wait for a decision (CONTRACT 11).
 */
export const timeoutDefaultMs = 10_000;
export const timeoutMaxMs = 3_600_000;
/** Sending one command: attempts after a lost connection (same client key), and the pause before the first retry (doubling). */
export const submitAttemptsMax = 3;
export const submitRetryDelayMs = 250;
/** Bytes of randomness in a client key made for one invocation (hex, so twice as many characters). */
export const clientKeyRandomBytes = 16;
/** Movements asked for per page when `--limit` is not given (spec 8: 1..1000). */
export const movementsPageLimitDefault = 100;
/** Accounts asked for per page by `accounts list` when `--limit` is not given (CONTRACT 11: 1..1000). */
export const accountsPageLimitDefault = 100;
/** Pages `accounts list --all` follows before it stops (an identity owns at most 256 accounts). */
export const accountPagesMax = 1_000;
/** Pages `grants list --all` follows before it stops (revoked grants stay listed, so an account's may be many). */
export const grantPagesMax = 10_000;
/** Pages an operator listing's `--all` follows before it stops (`identities list`, `operations list`, ...: a filtered page may be empty, so many). */
export const opsPagesMax = 100_000;
/** Pages `ops audit --all` follows before it stops. */
export const auditPagesMax = 100_000;
/** Pages `ops proposals list --all` follows at most. */
export const proposalPagesMax = 10_000;
/** Pages `movements --all` follows before it stops: a cursor loop would otherwise never end. */
export const movementsPagesMax = 100_000;
/** Reconnecting an event stream: first and largest pause between attempts. */
export const reconnectDelayMinMs = 200;
export const reconnectDelayMaxMs = 5_000;
/**
 * Bytes of one answer of the service (a view, a page, a reply, a refusal) read before it is refused
 * as broken (exit 3): room for a full page of movements with 1 KiB references, many times over.
 */
export const replyBytesMax = 16 * 1024 * 1024;
/** Bytes of a file (or stdin) a flag names (`--legs`, `--terms`, `@file` values): room for a disclosure, whose POST body is bounded at 4 MiB. */
export const inputFileBytesMax = 4 * 1024 * 1024;
/** How long a read of stdin that found nothing yet (a non-blocking pipe) waits before it reads again. */
export const stdinPollMs = 5;
/** Bytes of one line of a backup stream (one store entry; a journal chunk is the largest, a few MiB) before it is refused. */
export const backupLineBytesMax = 64 * 1024 * 1024;
/** Bytes of one server-sent event before the stream is treated as broken. */
export const eventBytesMax = 1 << 20;
/** Client-key length (spec 8), checked before sending so a runbook learns at once. */
export const clientKeyLengthMax = 256;
/** Pages of checkpoints (1 000 each) `checkpoints list --all` and `checkpoints export` follow before they stop. */
export const checkpointPagesMax = 10_000;
/** How often `checkpoints wait` reads the checkpoint. */
export const checkpointPollMs = 200;
/** `transfers create --batch`: the file's bytes (read whole, once). */
export const batchFileBytesMax = 64 * 1024 * 1024;
/** Commands per `POST /v1/batches` and its body's bytes (CONTRACT 4), less room for the envelope. */
export const batchCommandsMax = 1_000;
export const batchBodyBytesMax = 4 * 1024 * 1024 - 1024;
/** Submissions of one batch item the service turned away for now (ERR-DecisionUnavailable), same key each time, and the pause between. */
export const batchAttemptsMax = 10;
export const batchRetryDelayMs = 1_000;
/** Undecided items read one by one when the event stream's wait runs out (the rest are reported undecided). */
export const batchRereadsMax = 1_000;
/** How often the progress line on a terminal is redrawn. */
export const progressRedrawMs = 100;
/** Characters of an amount flag's text (2^128 has 39 digits; room for decimals and a symbol). */
export const amountTextCharsMax = 80;
/** How often a long-running view (the dashboard) reads the asset registry again while it lacks an asset it shows. */
export const registryRereadMs = 5_000;
/** `statements` without --from: the period's length, in days before --to (default now). */
export const statementDefaultDays = 30;
