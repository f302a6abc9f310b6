/**
 * A minimal HTTP front for the PostgreSQL ledger, the way such a service is usually
 * written: one Fastify route taking ledgerd's transfer body (one leg), calling the
 * `transfer` function through a `pg` pool, and replying once the transfer is decided
 * and committed; and `POST /v1/batches` taking ledgerd's batch of such transfers, decided
 * in one call of `transfer_batch` over arrays, each item refused alone. Run as its own process, like ledgerd, by bench/versus-postgres/main.ts.
 *
 * Connection: the `PG*` environment variables (PGHOST, PGPORT, PGUSER, PGPASSWORD,
 * PGDATABASE), `PG_POOL_MAX` connections; callers present `Bearer $FRONT_TOKEN`.
 * Prints `pg-front listening on <url>` when ready.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import { refusalCodes, transfer, transferBatch } from './sql-ledger.js';

const poolMax = Number(process.env.PG_POOL_MAX);
const token = process.env.FRONT_TOKEN ?? '';
if (!Number.isSafeInteger(poolMax) || poolMax < 1 || token === '') throw new Error('PG_POOL_MAX and FRONT_TOKEN are required');
const digest = (text: string) => createHash('sha256').update(text).digest();
const tokenDigest = digest(`Bearer ${token}`);

interface TransferBody {
  legs: [{ amount: string; asset: string; from: string; to: string }];
}

const bodySchema = {
  type: 'object',
  required: ['legs'],
  properties: {
    legs: {
      type: 'array',
      minItems: 1,
      maxItems: 1,
      items: {
        type: 'object',
        required: ['amount', 'asset', 'from', 'to'],
        additionalProperties: false,
        properties: {
          // A positive bigint that fits PostgreSQL's int8.
          amount: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' },
          asset: { type: 'string', minLength: 1, maxLength: 64 },
          from: { type: 'string', minLength: 1, maxLength: 256 },
          to: { type: 'string', minLength: 1, maxLength: 256 },
        },
      },
    },
  },
} as const;

/** As ledgerd's batch route: up to 1,000 commands, each a transfer with ledgerd's body. */
const batchSchema = {
  type: 'object',
  required: ['commands'],
  properties: {
    commands: {
      type: 'array',
      minItems: 1,
      maxItems: 1000,
      items: { type: 'object', required: ['command', 'body'], properties: { command: { const: 'transfer' }, body: bodySchema, client_key: { type: 'string', minLength: 1, maxLength: 128 } } },
    },
  },
} as const;

const db = new pg.Pool({ max: poolMax });
db.on('error', () => {}); // an idle connection's error: the pool drops it and opens another
const app = Fastify({ logger: false, bodyLimit: 16 * 1024 });

const unauthenticated = { error: 'ERR-Unauthenticated', description: 'a valid bearer token is required' };
const unavailable = { error: 'ERR-Unavailable', description: 'the transfer was not made; retry under the same key' };
// As ledgerd does without a client key: the key is derived from the request itself.
const keyOf = (clientKey: unknown, body: TransferBody) => (typeof clientKey === 'string' ? clientKey : digest(JSON.stringify(body)).toString('hex'));

app.post<{ Body: TransferBody }>('/v1/transfers', { schema: { body: bodySchema } }, async (request, reply) => {
  if (!timingSafeEqual(digest(request.headers.authorization ?? ''), tokenDigest)) {
    reply.code(401);
    return unauthenticated;
  }
  const leg = request.body.legs[0];
  const key = keyOf(request.headers['client-key'], request.body);
  try {
    const result = await transfer(db, leg.from, leg.to, leg.asset, BigInt(leg.amount), key);
    reply.code(result.replayed ? 200 : 201);
    return { transfer_id: result.transferId.toString(), replayed: result.replayed };
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    const refusal = refusalCodes[code];
    if (refusal === undefined) {
      reply.code(503);
      return unavailable;
    }
    reply.code(refusal.status);
    return { error: 'ERR-Refused', description: refusal.description };
  }
});

app.post<{ Body: { commands: { body: TransferBody; client_key?: string }[] } }>('/v1/batches', { schema: { body: batchSchema }, bodyLimit: 4 * 2 ** 20 }, async (request, reply) => {
  if (!timingSafeEqual(digest(request.headers.authorization ?? ''), tokenDigest)) {
    reply.code(401);
    return unauthenticated;
  }
  const items = request.body.commands.map(({ body, client_key }) => {
    const leg = body.legs[0];
    return { from: leg.from, to: leg.to, asset: leg.asset, amountMinor: BigInt(leg.amount), idempotencyKey: keyOf(client_key, body) };
  });
  try {
    const outcomes = await transferBatch(db, items);
    return {
      items: outcomes.map((o) =>
        'refusal' in o ? { error: 'ERR-Refused', description: refusalCodes[o.refusal]?.description ?? `refused (${o.refusal})` } : { transfer_id: o.transferId.toString(), replayed: o.replayed },
      ),
    };
  } catch {
    reply.code(503);
    return unavailable;
  }
});

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`pg-front listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}\n`);
process.once('SIGTERM', () => void app.close().then(() => db.end()).then(() => process.exit(0)));
