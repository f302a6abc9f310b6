/**
 * The load between two kills: concurrent clients, each posting one command after
 * another, and recording what it saw of each: an acknowledgement (200/202 carrying the
 * operation), a refusal, or nothing (the kill took the reply: unknown).
 */
import type { Client, Reply } from '../../test/daemon/support.js';
import type { CommandSource, SoakCommand } from './commands.js';
import type { Findings } from './findings.js';
import { postCommand } from './http.js';

export interface Load {
  /** Stops clients from sending more; requests in flight go on (the kill meets them). */
  halt(): void;
  /** Resolves once every client has seen the end of its last request. */
  readonly finished: Promise<void>;
}

/** How a reply to a command is taken: shared by the load and by the repeats after a restart. */
export function takeReply(command: SoakCommand, reply: Reply, findings: Findings): void {
  if ((reply.status === 200 || reply.status === 202) && typeof reply.body?.operation_reference === 'string') {
    if (reply.body.client_key !== command.clientKey) findings.problem(`command ${command.n}: the reply names client key ${reply.body.client_key}, not ${command.clientKey}`);
    if (command.operationRef !== null && command.operationRef !== reply.body.operation_reference) {
      findings.doubledCommand(`command ${command.n} (${command.clientKey}) was ${command.operationRef} and is now answered with ${reply.body.operation_reference}`);
    }
    command.outcome = 'acknowledged';
    command.operationRef ??= reply.body.operation_reference;
    return;
  }
  command.outcome = 'refused';
  // Only a full backlog may refuse a well-formed command of the soak; it must then have no effect.
  if (reply.status !== 503) findings.problem(`command ${command.n} (${command.kind}) refused: ${reply.status} ${reply.text.slice(0, 300)}`);
}

export function startLoad(options: {
  api: Client;
  tokenOf: (customer: string) => string;
  source: CommandSource;
  clients: number;
  findings: Findings;
  /** Called with each command acknowledged during the load. */
  acknowledged: (command: SoakCommand) => void;
}): Load {
  let halted = false;
  const client = async () => {
    while (!halted) {
      const command = options.source.next();
      try {
        const reply = await postCommand(options.api, options.tokenOf(command.sender), command);
        takeReply(command, reply, options.findings);
        if (command.outcome === 'acknowledged') options.acknowledged(command);
      } catch {
        command.outcome = 'unknown';
      }
    }
  };
  const finished = Promise.all(Array.from({ length: options.clients }, client)).then(() => undefined);
  return { halt: () => void (halted = true), finished };
}
