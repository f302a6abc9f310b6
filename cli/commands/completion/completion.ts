import type { Command } from 'commander';
import { type MakeContext, action } from '../../command.js';
import { completionScript, shells, type Shell } from '../../completion.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';

export function buildCompletion(parent: Command, make: MakeContext): Command {
  return parent
    .command('completion')
    .description('print a shell completion script: source <(ledgerctl completion bash), the zsh one in $fpath as _ledgerctl, the fish one in ~/.config/fish/completions/ledgerctl.fish')
    .argument('<shell>', shells.join(' or '))
    .action(action(make, (ctx: Context, shell: string) => runCompletion(ctx, shell, parent)));
}

export async function runCompletion(ctx: Context, shell: string, program: Command): Promise<void> {
  if (!(shells as readonly string[]).includes(shell)) throw new UsageError(`no completion for ${shell}; one of: ${shells.join(', ')}`);
  ctx.io.stdout.write(completionScript(program, shell as Shell));
}
