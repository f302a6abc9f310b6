/**
 * `ledgerctl __complete KIND [PROFILE]`: the values shell completion offers for a flag, one a
 * line, from the profile store alone (no request, so a Tab never waits on the network): profile
 * names, the asset symbols `assets list` last saw for the profile, the profile's saved account
 * names, and `-o`'s output formats. Only words of `[A-Za-z0-9._-]` are printed: bash's `compgen -W` expands its word list,
 * so a served asset symbol holding `$(…)` must never reach it. It never fails: no values, exit 0.
 */
import type { ValueKind } from './completion.js';
import type { Io } from './io.js';
import { formats } from './output.js';
import { ProfileStore } from './profiles.js';

export const completeCommand = '__complete';

const plainWord = /^[A-Za-z0-9._-]{1,64}$/;

export async function printCompletionValues(io: Io, args: readonly string[]): Promise<number> {
  try {
    for (const value of await valuesOf(io, args[0] as ValueKind, args[1])) if (plainWord.test(value)) io.stdout.write(`${value}\n`);
  } catch {
    // A profile store that cannot be read completes nothing; the shell falls back to files.
  }
  return 0;
}

async function valuesOf(io: Io, kind: ValueKind, named: string | undefined): Promise<readonly string[]> {
  if (kind === 'formats') return formats;
  const store = await ProfileStore.open(io.env.LEDGERCTL_CONFIG_DIR);
  if (kind === 'profiles') return store.names();
  const profile = store.get(named ?? io.env.LEDGER_PROFILE ?? store.active ?? 'default');
  if (kind === 'assets') return profile?.assets ?? [];
  if (kind === 'accounts') return Object.keys(profile?.accounts ?? {}).sort();
  return [];
}
