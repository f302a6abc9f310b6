/** Writes man/ledgerctl.1 from the command tree (a build step for maintainers, not part of ledgerctl). */
import { writeFileSync } from 'node:fs';
import { processIo } from './io.js';
import { renderManPage } from './manpage.js';
import { buildProgram, version } from './program.js';

writeFileSync(new URL('../../man/ledgerctl.1', import.meta.url), renderManPage(await buildProgram(processIo()), version));
