/** The verbs of `ledgerctl settlement`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildLayer } from './layer.js';
import { buildCompare, buildObserve, buildRescan, buildSettlementStatus, buildSync } from './settlement.js';

export const verbs: readonly Builder[] = [buildSettlementStatus, buildSync, buildCompare, buildRescan, buildObserve, buildLayer];
