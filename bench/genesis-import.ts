/**
 * Genesis import memory (issue 10): writes a genesis file of N funded customer
 * accounts (one identity, one account, one opening and one alias each, plus the
 * treasury's opening) to a temp dir, imports it the way `ledgerd init` does (streamed
 * from the file into a LevelDB book), and prints the import time, its CPU time (every
 * thread) and the peak RSS.
 * Usage: node dist/bench/genesis-import.js --accounts 1000000
 */
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { importGenesisSource } from '../src/book/genesis.js';
import { LevelStore } from '../src/store/level.js';
import { openGenesisFile } from '../daemon/genesis-file.js';

const { values } = parseArgs({ options: { accounts: { type: 'string', default: '100000' } } });
const accounts = Number(values.accounts);

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

const dir = mkdtempSync(join(tmpdir(), 'ledger-genesis-bench-'));
try {
  const file = join(dir, 'genesis.json');
  await writeGenesis(file);
  const rssBeforeMiB = process.memoryUsage().rss / 2 ** 20;
  const store = await LevelStore.open(join(dir, 'book'));
  const startMs = performance.now();
  const cpuBefore = process.cpuUsage();
  const genesis = await openGenesisFile(file);
  await importGenesisSource(store, genesis, Date.now());
  await genesis.close();
  const elapsedMs = performance.now() - startMs;
  // CPU of every thread (LevelDB's too): on a shared machine, what the import costs whatever the wall clock waited for.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  await store.close();
  // maxRSS is in KiB; the file was written before, with little memory, so the peak is the import's.
  const peakRssMiB = process.resourceUsage().maxRSS / 1024;
  console.log(
    `genesis import: ${accounts} accounts, file ${(statSync(file).size / 2 ** 20).toFixed(0)} MiB, ` +
      `${(elapsedMs / 1000).toFixed(1)} s (${Math.round(accounts / (elapsedMs / 1000))} accounts/s), ` +
      `CPU ${cpuS.toFixed(1)} s (${Math.round(accounts / cpuS)} accounts per CPU-second), load average ${loadavg()[0]!.toFixed(1)}, ` +
      `RSS before ${rssBeforeMiB.toFixed(0)} MiB, peak RSS ${peakRssMiB.toFixed(0)} MiB`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
