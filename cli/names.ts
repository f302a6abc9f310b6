/**
 * Accounts named the way people name them: where a flag or argument takes an account, it takes
 * its identifier (`did:ledger:acct:…`), a name saved in the profile in use (`accounts open
 * --save-as NAME`), or a ledger alias (`treasury:USD`, looked up with source `ledger`), in that order.
 */
import { RefusedError, UsageError } from './errors.js';
import type { Context } from './context.js';

const accountPrefix = 'did:ledger:acct:';
/** A saved name: no `:`, so it never stands for an identifier or a ledger alias like `treasury:USD`. */
const savedName = /^[A-Za-z0-9._-]{1,64}$/;

export function checkSavedName(name: string): string {
  if (!savedName.test(name)) throw new UsageError(`--save-as ${name}: a saved name is 1-64 of [A-Za-z0-9._-]`);
  return name;
}

/** The account `text` names, for `flag` (which the messages name). */
export async function accountOf(ctx: Context, flag: string, text: string): Promise<string> {
  if (text.startsWith(accountPrefix)) return text;
  if (savedName.test(text)) {
    const saved = await ctx.savedAccount(text);
    if (saved !== undefined) return saved;
  }
  try {
    return (await ctx.client().get<{ account: string }>('/v1/aliases', { source: 'ledger', name: text })).account;
  } catch (error) {
    if (error instanceof RefusedError && error.code === 'ERR-UnknownAccount') {
      throw new RefusedError(error.code, `${flag} ${text}: not an account identifier, a name saved in this profile, or a ledger alias the caller reaches (${error.description})`, null, error.exitCode);
    }
    throw error;
  }
}

/** `accountOf` for each account of a list flag (`--scope`, `--counterparties`). */
export const accountsOf = (ctx: Context, flag: string, texts: readonly string[] | undefined): Promise<string[] | undefined> =>
  texts === undefined ? Promise.resolve(undefined) : Promise.all(texts.map((text) => accountOf(ctx, flag, text)));

/** `accountOf` for an optional flag. */
export const optionalAccountOf = (ctx: Context, flag: string, text: string | undefined): Promise<string | undefined> =>
  text === undefined ? Promise.resolve(undefined) : accountOf(ctx, flag, text);
