/**
 * Pinning for the HTTP benches: the server under test (every thread of ledgerd; for the
 * SQL ledger, PostgreSQL's processes and its HTTP front) on one core, the load generator
 * on another, so a figure measures the server rather than how two processes share the
 * machine. Linux `taskset` (util-linux) sets the affinity; a process forked or a thread
 * started afterwards inherits it.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';

export interface Pinning {
  /** What a report prints about where each side ran. */
  readonly label: string;
  /** The argv prefix that starts a server on its core (empty when unpinned). */
  readonly serverArgvPrefix: readonly string[];
  /** The core list a server's processes are moved to, or null when unpinned. */
  readonly serverCpus: string | null;
}

/** The server on core 0, this process (the load generator) on core 1. */
const pinnedCpus = { server: '0', load: '1' };

export const unpinned: Pinning = { label: 'unpinned: server and load generator share every core', serverArgvPrefix: [], serverCpus: null };

/**
 * Pins this process (all its threads: the load generator and its libuv pool) to its core
 * and says how servers will be started; refuses on a machine with fewer than two cores
 * or without taskset, since the figures would not mean what the report says.
 */
export function pinnedSides(): Pinning {
  if (cpus().length < 2) throw new Error('pinning needs two cores: run with --pinning unpinned');
  setAffinity(process.pid, pinnedCpus.load);
  return {
    label: `pinned: server on CPU ${pinnedCpus.server} (all its processes and threads), load generator on CPU ${pinnedCpus.load} (taskset)`,
    serverArgvPrefix: ['taskset', '-c', pinnedCpus.server],
    serverCpus: pinnedCpus.server,
  };
}

/** Lets this process run on every core again (between a pinned and an unpinned pass). */
export function unpin(): void {
  setAffinity(process.pid, `0-${cpus().length - 1}`);
}

/** Every thread of `pid` onto `cpuList` (taskset's list syntax). */
export function setAffinity(pid: number, cpuList: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(pid)], { stdio: 'ignore' });
}

/** `pid` and every process descending from it (Linux /proc), e.g. a postmaster and its backends. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited while listed
    }
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
  }
  const tree: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const next = pending.pop()!;
    tree.push(next);
    pending.push(...(children.get(next) ?? []));
  }
  return tree;
}

/**
 * CPU time (user + system, ms) a process has used: all its threads, or its main thread
 * alone; with `withReaped`, also its children that have exited and been waited for (a
 * postmaster's finished backends). Linux /proc; clock ticks of 10 ms.
 */
export function processCpuMs(pid: number, options: { mainThreadOnly?: boolean; withReaped?: boolean } = {}): number {
  let stat: string;
  try {
    stat = readFileSync(options.mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
  } catch {
    return 0; // exited between listing and reading: its time is its parent's reaped time now
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime are fields 14-17 of stat: 12-15 after the command name.
  const own = Number(fields[11]) + Number(fields[12]);
  return (options.withReaped ? own + Number(fields[13]) + Number(fields[14]) : own) * 10;
}

/**
 * How many times the threads of `pid` went to sleep and were woken (voluntary context
 * switches, summed over /proc/<pid>/task/*): each costs a wake-up, which on a VM whose
 * core then idles is tens of µs (docs/performance.md, Acknowledgements below saturation).
 */
export function processSleeps(pid: number): number {
  let sleeps = 0;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0; // exited
  }
  for (const task of tasks) {
    try {
      sleeps += Number(/^voluntary_ctxt_switches:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // the thread ended while listed: its switches are gone with it
    }
  }
  return sleeps;
}

/** CPU time (ms) a process tree has used, its reaped children included: a server made of several processes. */
export function treeCpuMs(rootPid: number): number {
  return processTree(rootPid).reduce((sum, pid) => sum + processCpuMs(pid, { withReaped: pid === rootPid }), 0);
}

/** `--pinning pinned,unpinned`: the passes a bench runs, in that order. */
export function parsePinnings(text: string): ('pinned' | 'unpinned')[] {
  const kinds = text.split(',').map((s) => s.trim());
  for (const kind of kinds) if (kind !== 'pinned' && kind !== 'unpinned') throw new Error(`--pinning: unknown ${kind} (pinned, unpinned)`);
  return kinds as ('pinned' | 'unpinned')[];
}
