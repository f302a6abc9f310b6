/** The verbs of `ledgerctl accounts`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildBalance } from './balance.js';
import { buildCustody } from './custody.js';
import { buildLiabilities, buildVerifyLiabilities } from './liabilities.js';
import { buildClose, buildFreeze, buildUnfreeze } from './lifecycle.js';
import { buildAccountList } from './list.js';
import { buildOpen } from './open.js';
import { buildReclaim } from './reclaim.js';
import { buildRecoveryMechanisms } from './recovery-mechanisms.js';
import { buildShow } from './show.js';

export const verbs: readonly Builder[] = [buildOpen, buildShow, buildBalance, buildAccountList, buildCustody, buildRecoveryMechanisms, buildReclaim, buildFreeze, buildUnfreeze, buildClose, buildLiabilities, buildVerifyLiabilities];
