/** Every bound the CLI applies, in one place. Units are last in each name. */

/** Connecting to the service. */
export const connectTimeoutMs = 5_000;
/** Waiting for a reply's headers, and between chunks of a reply body (not of an event stream). */
export const requestTimeoutMs = 15_000;
/** Default and largest wait for an operation's decision (`operations wait`, `--wait`). */
export const waitTimeoutDefaultMs = 60_000;
export const waitTimeoutMaxMs = 3_600_000;
/** Movements asked for per page when `--limit` is not given (spec 8: 1..1000). */
export const movementsPageLimitDefault = 100;
/** Pages `movements --all` follows before it stops: a cursor loop would otherwise never end. */
export const movementsPagesMax = 100_000;
/** Reconnecting an event stream: first and largest pause between attempts. */
export const reconnectDelayMinMs = 200;
export const reconnectDelayMaxMs = 5_000;
/** Bytes of one server-sent event before the stream is treated as broken. */
export const eventBytesMax = 1 << 20;
/** Client-key length (spec 8), checked before sending so a runbook learns at once. */
export const clientKeyLengthMax = 256;
