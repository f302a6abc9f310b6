/** The `ledgerctl` entry point (bin/ledgerctl). */
import { processIo } from './io.js';
import { runCli } from './run.js';

// A reader that stops early (`ledgerctl … | head`) closes the pipe: what is left unwritten is
// unwanted, so stop quietly rather than die on the unhandled EPIPE, as cat and grep do.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await runCli(process.argv.slice(2), processIo());
