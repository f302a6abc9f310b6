/**
 * The soak's HTTP side, over the black-box tests' client (test/daemon/support.ts): a
 * command posted as its sender under its client key, and a bound on requests at once.
 */
import type { Client, Reply } from '../../test/daemon/support.js';
import type { SoakCommand } from './commands.js';

/** Requests the checks make at once. */
export const checksInFlightMax = 16;

/** Posts `command` as its sender, under its client key; throws when the reply is lost. */
export function postCommand(api: Client, token: string, command: SoakCommand): Promise<Reply> {
  return api.post(command.path, command.body, token, { 'client-key': command.clientKey });
}

/** Runs `task` over `items`, at most `limit` at a time. */
export async function eachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
