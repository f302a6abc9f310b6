/** The command tree as data, for the man page and shell completion (so neither can drift from it). */
import type { Command, Option } from 'commander';

export interface Leaf {
  /** `['accounts', 'open']`, or `['statements']` for a verbless command. */
  path: string[];
  command: Command;
}

/** Every runnable command, depth first, in the order `--help` lists them. */
export function leaves(program: Command, prefix: string[] = []): Leaf[] {
  return program.commands.flatMap((c) => (c.commands.length > 0 ? leaves(c, [...prefix, c.name()]) : [{ path: [...prefix, c.name()], command: c }]));
}

/** The groups (nouns, and groups within them like `custody changes`, named by their words) and their verbs. */
export function groups(program: Command, prefix: string[] = []): { name: string; description: string; verbs: string[] }[] {
  return program.commands
    .filter((c) => c.commands.length > 0)
    .flatMap((c) => [{ name: [...prefix, c.name()].join(' '), description: c.description(), verbs: c.commands.map((v) => v.name()) }, ...groups(c, [...prefix, c.name()])]);
}

/** A command's own options, without the help option commander adds. */
export function ownOptions(command: Command): readonly Option[] {
  return command.options.filter((o) => o.long !== '--help');
}

/** Every long option a command accepts, its own and the global ones. */
export function longOptions(program: Command, command: Command): string[] {
  return [...ownOptions(command), ...ownOptions(program)].map((o) => o.long).filter((l): l is string => l !== undefined);
}
