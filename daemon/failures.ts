/**
 * Why `ledgerd` could not start, as one line for stderr and a documented exit code
 * (docs/daemon.md, man/ledgerd.8): each names the problem and what to do, never a
 * stack trace.
 */

/** Exit codes of `ledgerd`. */
export const exitCodes = {
  ok: 0,
  /** Stopped on a failure while running (a broken invariant, a shutdown past its limit, the lease lost), or an unforeseen one. */
  failed: 1,
  usage: 2,
  /** The config, genesis or backup file cannot be read, is not valid, or names an unknown setting. */
  config: 3,
  /** The data dir (or the book's database) cannot be used: held by another ledgerd, not accessible, not the book's, or (init) already holding a book. */
  dataDir: 4,
  /** The listen address cannot be bound: in use, not on this host, or not permitted. */
  listen: 5,
  /** `ledgerd check` found the book inconsistent (each problem printed). */
  damaged: 6,
} as const;

export class StartupFailure extends Error {
  override name = 'StartupFailure';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;

/** A file-system failure on `path` in plain words. */
export function fsReason(error: unknown): string {
  switch (errnoOf(error)) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOENT':
      return 'it does not exist';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'EISDIR':
      return 'it is a directory';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'the disk is full';
    default:
      return (error as Error).message;
  }
}

/** The data dir could not be prepared or its book opened. */
export function dataDirFailure(dataDir: string, error: unknown): StartupFailure {
  const cause = (error as { cause?: unknown }).cause;
  if (errnoOf(cause) === 'LEVEL_LOCKED' || errnoOf(error) === 'LEVEL_LOCKED') {
    return new StartupFailure(`data dir ${dataDir} is in use by another ledgerd (its book is locked); stop that one, or give this one another --data-dir`, exitCodes.dataDir);
  }
  const reason = errnoOf(error) === undefined && cause !== undefined ? (cause as Error).message : fsReason(error);
  return new StartupFailure(`cannot use data dir ${dataDir}: ${reason}; make it a directory this user owns and can write, or give another --data-dir`, exitCodes.dataDir);
}

/** The listen address could not be bound. */
export function listenFailure(address: string, error: unknown): StartupFailure {
  const code = errnoOf(error);
  const reason =
    code === 'EADDRINUSE'
      ? 'the address is already in use; stop what holds it, or give another --listen'
      : code === 'EADDRNOTAVAIL'
        ? 'the address is not one of this host; give another --listen'
        : code === 'EACCES'
          ? 'permission denied (ports below 1024 need privileges); give another --listen'
          : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
            ? 'the host name does not resolve; give an address or another --listen'
            : `${(error as Error).message}; give another --listen`;
  return new StartupFailure(`cannot listen on ${address}: ${reason}`, exitCodes.listen);
}
