/**
 * Genesis import memory (issue 10): writes a genesis file of N funded customer
 * accounts (one identity, one account, one opening and one alias each, plus the
 * treasury's opening) to a temp dir, imports it the way `ledgerd init` does (streamed
 * from the file into a LevelDB book), and prints the import time, its CPU time (every
 * thread) and the peak RSS.
 * Usage: node dist/bench/genesis-import.js --accounts 1000000
 */
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { importGenesisSource } from '../src/book/genesis.js';
import { LevelStore } from '../src/store/level.js';
import { openGenesisFile } from '../daemon/genesis-file.js';

const { values } = parseArgs({ options: { accounts: { type: 'string', default: '100000' }, every: { type: 'string', default: '0' } } });
const accounts = Number(values.accounts);
/** Seconds between lines of memory over time (0: none). */
const everyS = Number(values.every);

async function writeGenesis(path: string): Promise<void> {
  const out = createWriteStream(path);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const section = async (name: string, first: boolean, row: (i: number) => string, extra = '') => {
    await write(`${first ? '{' : ','}"${name}":[`);
    for (let i = 0; i < accounts; i++) await write((i === 0 ? '' : ',') + row(i));
    await write(`${extra}]`);
  };
  const total = String(100 * accounts);
  await write('{"assets":[{"id":"USD","kind":"fiat","precision":2}]');
  await section('identities', false, (i) => `"did:ledger:id:g${i}"`);
  await section('accounts', false, (i) => `{"account":"did:ledger:acct:g${i}","owner":"did:ledger:id:g${i}","kind":"customer"}`, `,{"account":"did:ledger:acct:treasury","owner":"did:ledger:id:operator","kind":"treasury","treasury_limits":{"USD":"${total}"}}`);
  await section('openings', false, (i) => `{"account":"did:ledger:acct:g${i}","asset":"USD","amount":"100","direction":"credit"}`, `,{"account":"did:ledger:acct:treasury","asset":"USD","amount":"${total}","direction":"debit"}`);
  await section('aliases', false, (i) => `{"source":"old","name":"c-${i}","account":"did:ledger:acct:g${i}"}`);
  await write('}');
  out.end();
  await once(out, 'finish');
}

/** CPU seconds of the main (JavaScript) thread so far, from Linux's per-thread counters; null elsewhere. */
function mainThreadCpuS(): number | null {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return null;
  }
}

/** RSS split as Linux counts it: anonymous memory (heaps, LevelDB's buffers) and mapped files (LevelDB's tables). */
function rssLine(): string {
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  let split = '';
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    split = ` (anonymous ${mib(kib('RssAnon'))}, files ${mib(kib('RssFile'))})`;
  } catch {
    // Not Linux: the total only.
  }
  return `RSS ${mib(process.memoryUsage().rss)}${split}, JS heap used ${mib(process.memoryUsage().heapUsed)}`;
}

const dir = mkdtempSync(join(tmpdir(), 'ledger-genesis-bench-'));
try {
  const file = join(dir, 'genesis.json');
  await writeGenesis(file);
  const rssBeforeMiB = process.memoryUsage().rss / 2 ** 20;
  const store = await LevelStore.open(join(dir, 'book'));
  const startMs = performance.now();
  const cpuBefore = process.cpuUsage();
  const mainBefore = mainThreadCpuS();
  const genesis = await openGenesisFile(file);
  const sampler =
    everyS > 0
      ? setInterval(() => {
          const share = genesis.share();
          const cpu = process.cpuUsage(cpuBefore);
          console.log(`${((performance.now() - startMs) / 1000).toFixed(0)} s: ${share === null ? 'counting' : `${(100 * share).toFixed(1)}% of entries`}, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(0)} s, ${rssLine()}`);
        }, everyS * 1000)
      : null;
  await importGenesisSource(store, genesis, Date.now());
  if (sampler !== null) clearInterval(sampler);
  await genesis.close();
  const elapsedMs = performance.now() - startMs;
  // CPU of every thread (LevelDB's too): on a shared machine, what the import costs whatever the wall clock waited for.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const mainAfter = mainThreadCpuS();
  const mainS = mainBefore === null || mainAfter === null ? null : mainAfter - mainBefore;
  await store.close();
  if (everyS > 0) console.log(`at the end: ${rssLine()}`);
  // maxRSS is in KiB; the file was written before, with little memory, so the peak is the import's.
  const peakRssMiB = process.resourceUsage().maxRSS / 1024;
  console.log(
    `genesis import: ${accounts} accounts, file ${(statSync(file).size / 2 ** 20).toFixed(0)} MiB, ` +
      `${(elapsedMs / 1000).toFixed(1)} s (${Math.round(accounts / (elapsedMs / 1000))} accounts/s), ` +
      `CPU ${cpuS.toFixed(1)} s (${Math.round(accounts / cpuS)} accounts per CPU-second, ${((1e6 * cpuS) / accounts).toFixed(1)} µs per account${mainS === null ? '' : `; main thread ${mainS.toFixed(1)} s`}), load average ${loadavg()[0]!.toFixed(1)}, ` +
      `RSS before ${rssBeforeMiB.toFixed(0)} MiB, peak RSS ${peakRssMiB.toFixed(0)} MiB`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
