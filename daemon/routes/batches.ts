/**
 * POST /v1/batches (CONTRACT 4): up to 1,000 transfers, reservations, captures and
 * releases in one request. Each item is taken as if sent alone to its own route by the
 * same caller with the same `on-behalf-of`: its body checked against that route's
 * schema, its client key given or derived as that route derives it, acknowledged and
 * decided on its own. Not atomic across items. The items are handed to the kernel in one
 * turn, so intake takes them in one round and one submission write where the backlog
 * shares allow; the shares count items, not requests.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../../src/auth/authority.js';
import type { Acknowledgement } from '../../src/book/kernel.js';
import { type Refusal, Refused, refuse } from '../../src/errors.js';
import type { Command } from '../../src/model/model.js';
import { commandReply, isTerminal } from '../../src/queries/views.js';
import type { Wire } from '../../src/queries/wire.js';
import { clientKeyLengthMax } from '../../src/constants.js';
import { batchBodyBytesMax, batchCommandsMax } from '../constants.js';
import { actingCaller, rawReference, treasuryOf } from '../http/command.js';
import { gateApproval } from '../http/approvals.js';
import { requestDigest } from '../http/digest.js';
import { rawElements, rawMember } from '../http/raw-json.js';
import { type SchemaFailure, refusalOf, schemaRefusal, wireReply } from '../http/replies.js';
import { type Schema, commandHeaders, commandReplySchema, noQuery, object, operationRef, refusalSchema, responses, str } from '../http/schemas.js';
import { retriable } from '../http/status.js';
import type { RouteContext } from './context.js';
import { captureBodySchema, captureCommand, releaseBodySchema, releaseCommand, reservationBodySchema, reservationCommand } from './reservations.js';
import { transferBodySchema, transferCommand } from './transfers.js';

/** A body schema widened by `reservation`, the operation reference a capture or release names in its route's path. */
function withReservation(schema: Schema): Schema {
  const required = (schema.required as string[] | undefined) ?? [];
  return { ...schema, properties: { ...(schema.properties as Record<string, Schema>), reservation: operationRef }, required: [...required, 'reservation'] };
}

/** What one kind of item is: its body's schema, the route it stands for, and the command it asks for. */
interface Batchable {
  readonly body: Schema;
  /** The path its own route is called on (what a derived key covers). */
  path(reservation: string): string;
  command(body: unknown, reservation: string, context: RouteContext): Command;
}

const batchable: Record<string, Batchable> = {
  transfer: { body: transferBodySchema, path: () => '/v1/transfers', command: (body, _r, context) => transferCommand(body, context) },
  reservation: { body: reservationBodySchema, path: () => '/v1/reservations', command: (body, _r, context) => reservationCommand(body, context) },
  capture: { body: withReservation(captureBodySchema), path: (r) => `/v1/reservations/${r}/capture`, command: (body, r) => captureCommand(body, r) },
  release: { body: withReservation(releaseBodySchema), path: (r) => `/v1/reservations/${r}/release`, command: (_body, r) => releaseCommand(r) },
};

const itemSchema = object(
  {
    command: { enum: Object.keys(batchable) },
    body: { type: 'object', description: "exactly what the command's own route takes (capture and release: with `reservation`, the operation reference)" },
    client_key: str(`the item's client key, 1-${clientKeyLengthMax} characters; absent: derived as its own route derives it`, { minLength: 1, maxLength: clientKeyLengthMax }),
  },
  ['command', 'body'],
);
export const batchBodySchema = object({ commands: { type: 'array', items: itemSchema } }, ['commands']);
export const batchReplySchema = object({ items: { type: 'array', items: { anyOf: [commandReplySchema, refusalSchema] } } }, ['items']);

interface BatchItem {
  readonly command: string;
  readonly body: Record<string, unknown>;
  readonly client_key?: string;
}

/** An item ready for the kernel, or the refusal it met at submission. */
type Prepared = { readonly command: Command; readonly submit: (unapproved: boolean) => Promise<Acknowledgement> } | { readonly refused: Refusal };

/** An item past the approval gate, or its refusal (ERR-ApprovalRequired). */
async function gate(request: FastifyRequest, p: Extract<Prepared, { submit: unknown }>): Promise<{ readonly submit: () => Promise<Acknowledgement> } | { readonly refused: Refusal }> {
  try {
    const { unapproved } = await gateApproval(request, p.command, { isTreasury: treasuryOf(request) });
    return { submit: () => p.submit(unapproved) };
  } catch (error) {
    if (error instanceof Refused) return { refused: error.refusal };
    throw error;
  }
}

export function batchRoutes(app: FastifyInstance, context: RouteContext): void {
  const { kernel } = context;

  /** Checks item `i` as its own route would and binds it to its client key and raw `reference`. */
  function prepare(request: FastifyRequest, actor: Actor, item: BatchItem, i: number, rawBody: string | undefined): Prepared {
    const kind = batchable[item.command]!;
    const validate = request.compileValidationSchema(kind.body);
    if (!validate(item.body)) return { refused: schemaRefusal(validate.errors![0] as SchemaFailure, 'body member', `commands.${i}.body`) };
    try {
      const { reservation, ...body } = item.body;
      const ref = typeof reservation === 'string' ? reservation : '';
      const command = kind.command(body, ref, context);
      const submission = {
        command,
        actor,
        clientKey: item.client_key ?? null,
        // The same digest as the route's own: an item and the same command sent alone are one operation.
        requestDigest: requestDigest(actor, 'POST', kind.path(ref), body),
        reference: rawBody === undefined ? null : rawReference(body, rawBody),
      };
      return { command, submit: (unapproved) => kernel.submit(unapproved ? { ...submission, unapproved } : submission) };
    } catch (error) {
      if (error instanceof Refused) return { refused: error.refusal };
      throw error;
    }
  }

  app.post(
    '/v1/batches',
    {
      bodyLimit: batchBodyBytesMax,
      config: { oversizedBodyRefusal: 'ERR-BatchTooLarge' },
      schema: {
        operationId: 'submitBatch',
        summary: `Up to ${batchCommandsMax} transfers, reservations, captures and releases, each taken, acknowledged and decided as if sent alone`,
        headers: { type: 'object', properties: { 'on-behalf-of': (commandHeaders.properties as Record<string, Schema>)['on-behalf-of']! } },
        querystring: noQuery,
        body: batchBodySchema,
        response: responses({ 200: batchReplySchema, 202: batchReplySchema }),
      },
    },
    async (request, reply) => {
      const { commands } = request.body as { commands: BatchItem[] };
      if (request.headers['client-key'] !== undefined) refuse('ERR-MalformedCommand', 'a batch has no client key of its own: give each item its client_key');
      if (commands.length === 0 || commands.length > batchCommandsMax) {
        refuse('ERR-BatchTooLarge', `a batch carries 1 to ${batchCommandsMax} commands; this one carries ${commands.length}`);
      }
      // One `on-behalf-of` for the whole batch: checked once, as each item's route would check it.
      const actor = await actingCaller(request);
      // Only an item whose body has a `reference` needs its text as sent: without one, the body is not scanned.
      const hasReference = (item: BatchItem) => Object.hasOwn(item.body, 'reference');
      const rawCommands = request.rawBody === null || !commands.some(hasReference) ? null : rawMember(request.rawBody, 'commands');
      const rawItems = rawCommands === null ? [] : rawElements(rawCommands);
      const prepared = commands.map((item, i) => {
        const rawItem = hasReference(item) ? rawItems[i] : undefined;
        const rawBody = rawItem === undefined ? undefined : (rawMember(rawItem, 'body') ?? undefined);
        return prepare(request, actor, item, i, rawBody);
      });
      // Each item passes the approval gate as if sent alone (a treasury's transfer above its threshold, CONTRACT 13), all before any is handed over.
      const gated = await Promise.all(prepared.map(async (p) => ('submit' in p ? gate(request, p) : p)));
      // Handed to the kernel in order, in one turn: one intake round takes them together.
      const outcomes = await Promise.allSettled(gated.map((p) => ('submit' in p ? p.submit() : Promise.reject(new Refused(p.refused.error, p.refused.description)))));

      let allTerminal = true;
      let anyRetriable = false;
      const items: Wire[] = outcomes.map((outcome) => {
        if (outcome.status === 'fulfilled') {
          allTerminal &&= isTerminal(outcome.value.operation);
          return commandReply(outcome.value.operation, null);
        }
        const { refusal: r, bug } = refusalOf(outcome.reason, request, batchBodyBytesMax);
        if (bug) request.log.error({ err: outcome.reason }, 'unexpected error in a batch item');
        anyRetriable ||= retriable(r.error);
        return { error: r.error, description: r.description };
      });
      if (anyRetriable) reply.header('retry-after', String(context.config.retryAfterSeconds));
      // A refused item is final for this request: only an acknowledged item still waiting keeps the reply at 202.
      return wireReply(reply, { items }, allTerminal ? 200 : 202);
    },
  );
}
