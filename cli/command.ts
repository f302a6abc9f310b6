/**
 * Binding run functions to commander. Each verb module exports its options type, a builder that
 * declares the command, and a run function tests call without the argument parser.
 */
import type { Command } from 'commander';
import { Context, type GlobalOptions } from './context.js';
import { UsageError } from './errors.js';
import type { Io } from './io.js';

export type MakeContext = (globals: GlobalOptions) => Context;

/** Declares one command under `parent` (a noun, or the program for a verbless command) and returns it. */
export type Builder = (parent: Command, make: MakeContext) => Command;

export const contextFor =
  (io: Io): MakeContext =>
  (globals) =>
    new Context(io, globals);

/**
 * A commander action calling `run(ctx, ...arguments, options)`. A usage error found by the run
 * function is reported like commander's own: the message, then where the command's help is (exit 2).
 */
export function action<A extends unknown[]>(make: MakeContext, run: (ctx: Context, ...args: A) => Promise<void>) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args[args.length - 1] as Command;
    const ctx = make(command.optsWithGlobals<GlobalOptions>());
    try {
      await ctx.connect();
      await run(ctx, ...(args.slice(0, -1) as A));
    } catch (error) {
      if (error instanceof UsageError) command.error(`error: ${error.message}`, { exitCode: error.exitCode, code: 'ledgerctl.usage' });
      throw error;
    } finally {
      await ctx.close();
    }
  };
}
