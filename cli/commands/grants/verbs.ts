/** The verbs of `ledgerctl grants`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildIssue } from './issue.js';
import { buildGrantList } from './list.js';
import { buildRevoke } from './revoke.js';

export const verbs: readonly Builder[] = [buildIssue, buildGrantList, buildRevoke];
