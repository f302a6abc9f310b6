/** Grant terms (spec 2.6) from flags, or whole from a JSON file, for `grants issue` and `ops issuance-grant`. */
import type { Command } from 'commander';
import type { GrantSubject, GrantTerms, Json } from './api.js';
import type { Context } from './context.js';
import { UsageError } from './errors.js';
import { amountHelp, amountMinorOf } from './money.js';
import { accountsOf, optionalAccountOf } from './names.js';
import { integer, jsonFile, list, timeMs } from './parse.js';

export interface TermsFlags {
  terms?: string;
  principal?: string;
  subjectAccount?: string;
  subjectAsset?: string;
  subjectIdentity?: string;
  delegatedAccounts?: boolean;
  ops?: string[];
  assets?: string[];
  counterparties?: string[];
  expires?: string;
  parent?: string;
  perOperation?: string;
  perWindowMs?: string;
  perWindowLimit?: string;
}

export function withTermsFlags(command: Command): Command {
  return command
    .option('--terms <file>', 'the terms as one JSON object (- for stdin) instead of the flags below')
    .option('--principal <identity>', 'who will hold the grant')
    .option('--subject-account <account>', 'subject: one ledger account (an identifier, a saved name or a ledger alias)')
    .option('--subject-asset <symbol>', 'subject: one asset')
    .option('--subject-identity <identity>', 'subject: the accounts an identity will own (with --ops open_account)')
    .option('--delegated-accounts', 'subject: every account in delegated custody when used')
    .option('--ops <ops>', 'what it may be used for, e.g. transfer,open_account', list)
    .option('--assets <symbols>', 'only these assets', list)
    .option('--counterparties <accounts>', 'only these counterparties', list)
    .option('--expires <time>', 'stops working then (ms since the epoch, or ISO-8601)')
    .option('--parent <grant>', 'the grant it narrows')
    .option('--per-operation <amount>', `the most one operation may move: ${amountHelp} (major units need one asset: the symbol, --assets or --subject-asset)`)
    .option('--per-window-ms <ms>', 'with --per-window-limit: the window length')
    .option('--per-window-limit <amount>', 'the most that may move in one window, written as --per-operation');
}

export function termsOf(flags: TermsFlags, kind: string): Json {
  if (flags.terms !== undefined) return jsonFile('--terms', flags.terms);
  if (flags.principal === undefined) throw new UsageError('a grant needs --principal (or --terms FILE)');
  if (flags.ops === undefined || flags.ops.length === 0) throw new UsageError('a grant needs --ops (or --terms FILE)');
  if ((flags.perWindowMs === undefined) !== (flags.perWindowLimit === undefined)) throw new UsageError('--per-window-ms and --per-window-limit go together');
  const terms: GrantTerms = {
    kind,
    principal: flags.principal,
    subject: subjectOf(flags),
    ops: flags.ops,
    assets: flags.assets ?? null,
    counterparties: flags.counterparties ?? null,
    expires: flags.expires === undefined ? null : Number(timeMs('--expires', flags.expires)),
    parent: flags.parent ?? null,
    per_operation: flags.perOperation ?? null,
    per_window: flags.perWindowMs === undefined ? null : { length: integer('--per-window-ms', flags.perWindowMs, 1, Number.MAX_SAFE_INTEGER), limit: flags.perWindowLimit! },
  };
  return terms as unknown as Json;
}

/**
 * The flags with `--subject-account` and `--counterparties` resolved to identifiers (each may be a
 * saved name or an alias), and the bounds to minor units.
 */
export async function withAccountsResolved<F extends TermsFlags>(ctx: Context, flags: F): Promise<F> {
  // A bound counts minor units of whichever asset a use moves: major units need the one asset the grant is for.
  const only = flags.subjectAsset ?? (flags.assets?.length === 1 ? flags.assets[0] : undefined);
  const bound = (flag: string, text: string | undefined) => (text === undefined ? undefined : amountMinorOf(ctx, flag, text, only));
  return {
    ...flags,
    subjectAccount: await optionalAccountOf(ctx, '--subject-account', flags.subjectAccount),
    counterparties: await accountsOf(ctx, '--counterparties', flags.counterparties),
    perOperation: await bound('--per-operation', flags.perOperation),
    perWindowLimit: await bound('--per-window-limit', flags.perWindowLimit),
  };
}

function subjectOf(flags: TermsFlags): GrantSubject {
  const given: GrantSubject[] = [];
  if (flags.subjectAccount !== undefined) given.push({ account: flags.subjectAccount });
  if (flags.subjectAsset !== undefined) given.push({ asset: flags.subjectAsset });
  if (flags.subjectIdentity !== undefined) given.push({ identity: flags.subjectIdentity });
  if (flags.delegatedAccounts === true) given.push('delegated_accounts');
  if (given.length !== 1) throw new UsageError('give exactly one subject: --subject-account, --subject-asset, --subject-identity or --delegated-accounts');
  return given[0]!;
}
