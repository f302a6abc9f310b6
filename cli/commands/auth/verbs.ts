/** The verbs of `ledgerctl auth`, in the order its help lists them (loaded only when a command line needs them: cli/program.ts). */
import type { Builder } from '../../command.js';
import { buildChallenge } from './challenge.js';
import { buildLogin } from './login.js';
import { buildLogout } from './logout.js';
import { buildWhoami } from './whoami.js';

export const verbs: readonly Builder[] = [buildChallenge, buildLogin, buildLogout, buildWhoami];
