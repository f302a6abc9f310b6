/**
 * What the machine charges for the fixed costs of an acknowledgement below saturation,
 * apart from ledgerd: a thread's sleep and wake-up (a timer: the core idles, then wakes
 * it), a LevelDB read through libuv's pool against one on the calling thread, and a
 * LevelDB batch written with and without sync. CPU is this process's (all threads, from
 * getrusage), the main thread's from /proc (Linux). Run it on one core, as bench/http
 * pins ledgerd: `taskset -c 0 node dist/bench/wakeups.js`. Nothing is asserted.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Level } from 'level';

/** This process's main thread's CPU time (ms), from the scheduler's own account (ns precision). */
function mainThreadMs(): number {
  const sched = readFileSync(`/proc/${process.pid}/task/${process.pid}/sched`, 'utf8');
  return Number(/se\.sum_exec_runtime\s*:\s*([\d.]+)/.exec(sched)?.[1] ?? Number.NaN);
}

async function measure(name: string, count: number, run: (i: number) => unknown): Promise<void> {
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadMs();
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await run(i);
  const wallUs = ((performance.now() - t0) * 1000) / count;
  const cpu = process.cpuUsage(cpu0);
  const cpuUs = (cpu.user + cpu.system) / count;
  const mainUs = ((mainThreadMs() - main0) * 1000) / count;
  console.log(`| ${name} | ${wallUs.toFixed(1)} µs | ${cpuUs.toFixed(1)} µs | ${mainUs.toFixed(1)} µs |`);
}

const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-wakeups-'));
const db = new Level<string, string>(dir);
try {
  await db.open();
  for (let b = 0; b < 20; b++) {
    const batch = db.batch();
    for (let i = 0; i < 2000; i++) batch.put(`ck/${String(b * 2000 + i).padStart(8, '0')}/${'x'.repeat(40)}`, 'v'.repeat(120));
    await batch.write();
  }
  const present = (i: number) => `ck/${String((i * 7919) % 40000).padStart(8, '0')}/${'x'.repeat(40)}`;
  const absent = (i: number) => `ck/absent/${i}`;
  const value = 'v'.repeat(380);
  console.log(`one core's fixed costs (Node ${process.version}); per operation, one after another:`);
  console.log('| operation | wall | CPU, all threads | CPU, main thread |');
  console.log('|---|---:|---:|---:|');
  await measure('setImmediate (a turn of the event loop, no sleep)', 20_000, () => new Promise<void>((resolve) => setImmediate(resolve)));
  await measure('timer of 1 ms (the thread sleeps, the core idles, a wake-up)', 2_000, () => sleep(1));
  await measure('timer of 3 ms (the same, longer idle)', 700, () => sleep(3));
  await measure('LevelDB getMany of 1 absent key (libuv pool)', 5_000, (i) => db.getMany([absent(i)]));
  await measure('LevelDB getSync of 1 absent key (this thread)', 20_000, (i) => db.getSync(absent(i)));
  await measure('LevelDB getMany of 1 present key (libuv pool)', 5_000, (i) => db.getMany([present(i)]));
  await measure('LevelDB getSync of 1 present key (this thread)', 20_000, (i) => db.getSync(present(i)));
  await measure('LevelDB batch of 8 puts, no sync', 5_000, (i) => db.batch(Array.from({ length: 8 }, (_, j) => ({ type: 'put' as const, key: `n/${i}/${j}`, value }))));
  await measure('LevelDB batch of 8 puts, sync (log append + fdatasync)', 1_000, (i) => db.batch(Array.from({ length: 8 }, (_, j) => ({ type: 'put' as const, key: `s/${i}/${j}`, value })), { sync: true }));
} finally {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
