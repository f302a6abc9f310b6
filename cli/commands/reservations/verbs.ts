/** The verbs of `ledgerctl reservations`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildCapture } from './capture.js';
import { buildCreate } from './create.js';
import { buildReservationList } from './list.js';
import { buildRelease } from './release.js';

export const verbs: readonly Builder[] = [buildCreate, buildReservationList, buildCapture, buildRelease];
