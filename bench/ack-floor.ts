/**
 * The floor of a durable acknowledgement in ledgerd's stack (issue 28): a process that does
 * only what no acknowledgement of a transfer can skip, with ledgerd's own parts, and
 * nothing of the book. Per POST /v1/transfers, and per transfer of a POST /v1/batches (each
 * item checked against the transfer route's schema, as ledgerd's batches route does), it:
 * - validates the headers and body with ledgerd's route schemas (Fastify, ajv) and parses
 *   the transfer as ledgerd's route does (transferCommand: ids, assets, bigint amounts);
 * - checks the bearer as ledgerd's remembered tokens do: its SHA-256 found in a map;
 * - takes the request's digest (ledgerd's requestDigest: canonical JSON, SHA-256), which
 *   a client key is bound to;
 * - stores the command, JSON of about the size of ledgerd's Received operation, with the
 *   others of its turn of the event loop in one fsync'd write through ledgerd's LevelStore and
 *   group commit (a write in flight gathers the next), and answers 202 after the write
 *   returns, with ledgerd's reply serializer.
 * No decision, no client-key record, no event: what ledgerd spends above this row is the
 * book's; what this row spends above the bare route is the stack's price for a durable,
 * validated acknowledgement. bench/http.ts runs it beside ledgerd and the bare route.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { transferDeadlineDefaultMs } from '../src/constants.js';
import { sha256Hex } from '../src/sha256.js';
import { GroupCommit } from '../src/book/group-commit.js';
import { LevelStore } from '../src/store/level.js';
import type { BatchOp } from '../src/store/port.js';
import { requestDigest } from '../daemon/http/digest.js';
import { wireReply } from '../daemon/http/replies.js';
import { commandHeaders, commandReplySchema, noQuery, responses } from '../daemon/http/schemas.js';
import { transferBodySchema, transferCommand } from '../daemon/routes/transfers.js';
import { batchBodySchema, batchReplySchema } from '../daemon/routes/batches.js';
import { batchBodyBytesMax } from '../daemon/constants.js';
import type { Wire } from '../src/queries/wire.js';
import type { RouteContext } from '../daemon/routes/context.js';

/** The environment variable that carries the bearer the floor accepts (the load generator's operator key). */
export const floorKeyVariable = 'LEDGER_BENCH_FLOOR_KEY';

const bearerPattern = /^Bearer +([\x21-\x7e]+) *$/i;
const operator = 'did:ledger:id:operator';

export async function ackFloorServer(): Promise<void> {
  const key = process.env[floorKeyVariable];
  if (key === undefined || key === '') throw new Error(`${floorKeyVariable} is not set`);
  const tokens = new Map([[sha256Hex(key), operator]]);
  const dir = mkdtempSync(join(tmpdir(), 'ledger-ack-floor-'));
  const store = await LevelStore.open(dir);
  // ledgerd's own group commit: one write in flight, the writes that come meanwhile in the next.
  const writes = new GroupCommit(store, true, 0);
  let seq = 0;
  /** The records of this turn of the event loop, written together once it ends (as intake gathers a turn's submissions). */
  let turn: { ops: BatchOp[]; written: Promise<void> } | null = null;
  const stored = (entryKey: string, value: string): Promise<void> => {
    if (turn === null) {
      const ops: BatchOp[] = [];
      const written = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        turn = null;
        return writes.write(ops);
      });
      turn = { ops, written };
    }
    turn.ops.push({ type: 'put', key: entryKey, value });
    return turn.written;
  };

  const context = { config: { transferDeadlineMs: transferDeadlineDefaultMs }, clock: Date.now } as Pick<RouteContext, 'config' | 'clock'>;
  /** The bearer's principal, or undefined for a bearer the floor does not know. */
  const principalOf = (request: FastifyRequest): string | undefined => {
    const bearer = bearerPattern.exec(request.headers.authorization ?? '')?.[1];
    return bearer === undefined ? undefined : tokens.get(sha256Hex(bearer));
  };
  /** One transfer taken: parsed, digested, its Received record stored with the others of its group; its reply. */
  const take = async (principal: string, body: unknown, clientKeyGiven: string | undefined): Promise<Wire> => {
    const command = transferCommand(body, context);
    const digest = requestDigest({ principal, onBehalfOf: null }, 'POST', '/v1/transfers', body);
    const clientKey = clientKeyGiven ?? digest;
    const ref = `op_${(++seq).toString(16).padStart(16, '0')}`;
    const legs = command.type === 'transfer' ? command.legs.map((leg) => ({ ...leg, amountMinor: leg.amountMinor.toString() })) : [];
    const actor = { principal, credential: 'did:ledger:cred:operator', onBehalfOf: null, grant: null, kind: 'operator' };
    await stored(`cmd/${ref}`, JSON.stringify({ ref, command: { type: 'transfer', legs, deadlineMs: command.type === 'transfer' ? command.deadlineMs : 0 }, actor, state: 'Received', submittedAtMs: Date.now(), clientKey, digest }));
    return { client_key: clientKey, client_key_derived: clientKeyGiven === undefined, operation_reference: ref, terminal: false, state: 'Received' };
  };
  const refused = (reply: FastifyReply) => wireReply(reply, { error: 'ERR-CredentialInvalid', description: 'unknown bearer' }, 401);

  const app = Fastify({ logger: false, bodyLimit: batchBodyBytesMax });
  app.post(
    '/v1/transfers',
    { schema: { headers: commandHeaders, querystring: noQuery, body: transferBodySchema, response: responses({ 200: commandReplySchema, 202: commandReplySchema }) } },
    async (request, reply) => {
      const principal = principalOf(request);
      if (principal === undefined) return refused(reply);
      const clientKey = request.headers['client-key'];
      return wireReply(reply, await take(principal, request.body, typeof clientKey === 'string' ? clientKey : undefined), 202);
    },
  );
  // Each item checked against the transfer route's schema, as ledgerd's batches route checks it; all of a batch in one group write.
  app.post(
    '/v1/batches',
    { schema: { querystring: noQuery, body: batchBodySchema, response: responses({ 200: batchReplySchema, 202: batchReplySchema }) } },
    async (request, reply) => {
      const principal = principalOf(request);
      if (principal === undefined) return refused(reply);
      const { commands } = request.body as { commands: { command: string; body: unknown; client_key?: string }[] };
      const validate = request.compileValidationSchema(transferBodySchema);
      const items = await Promise.all(
        commands.map((item) => (item.command === 'transfer' && validate(item.body) ? take(principal, item.body, item.client_key) : { error: 'ERR-MalformedCommand', description: 'the floor takes transfers only' })),
      );
      return wireReply(reply, { items }, 202);
    },
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.stdout.write(`ack-floor listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
  process.once('SIGTERM', () =>
    void app
      .close()
      .then(() => store.close())
      .finally(() => {
        rmSync(dir, { recursive: true, force: true });
        process.exit(0);
      }),
  );
}
