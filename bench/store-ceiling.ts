/**
 * The ceiling of the kernel's write layout (bench/ceilings.ts), and classic-level's
 * own puts beside it. Run beside bench/kernel (which prints both too) to see what
 * the store alone allows.
 *
 *   npm run build && node dist/bench/store-ceiling.js [--transfers 200000] [--per-write 1024] [--puts 1000000]
 */
import { parseArgs } from 'node:util';
import { rawPuts, storeCeiling } from './ceilings.js';

const { values: args } = parseArgs({ options: { transfers: { type: 'string', default: '200000' }, 'per-write': { type: 'string', default: '1024' }, accounts: { type: 'string', default: '10000' }, puts: { type: 'string', default: '1000000' } } });

async function main() {
  const transfers = Number(args.transfers);
  const ceiling = await storeCeiling(transfers, Number(args['per-write']), Number(args.accounts));
  console.log(`store ceiling: ${transfers} transfers' writes: ${ceiling.perSec.toFixed(0)} transfers/s, ${ceiling.cpuUs.toFixed(0)} CPU us per transfer`);
  const puts = Number(args.puts);
  const raw = await rawPuts(puts);
  console.log(`classic-level: ${puts} puts of 300 B in fsync'd batches of 1,000: ${raw.perSec.toFixed(0)} puts/s, ${raw.cpuUs.toFixed(1)} CPU us per put`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
