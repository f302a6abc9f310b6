/**
 * The soak's HTTP side: one keep-alive pool per daemon incarnation (each listens on a
 * new port), a command posted under its client key, and an operator read.
 */
import { Pool } from 'undici';
import type { SoakCommand } from './commands.js';

export interface Answer {
  readonly status: number;
  readonly text: string;
  /** The parsed JSON body, undefined when it is not JSON. */
  readonly body: any;
}

export const poolConnections = 16;

export function poolFor(url: string): Pool {
  return new Pool(url, { connections: poolConnections });
}

async function answerOf(res: { statusCode: number; body: { text(): Promise<string> } }): Promise<Answer> {
  const text = await res.body.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, text, body };
}

/** Posts `command` as its sender, under its client key; throws when the reply is lost. */
export async function postCommand(pool: Pool, token: string, command: SoakCommand): Promise<Answer> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'client-key': command.clientKey };
  return answerOf(await pool.request({ method: 'POST', path: command.path, headers, body: JSON.stringify(command.body) }));
}

export async function getAs(pool: Pool, token: string, path: string): Promise<Answer> {
  return answerOf(await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${token}` } }));
}

/** Runs `task` over `items`, at most `limit` at a time. */
export async function eachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
