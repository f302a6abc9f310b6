/**
 * POST /v1/ops/check starts the online check of the served book (daemon/online-check.ts;
 * operator and up: it reads the whole book), GET /v1/ops/check follows it (auditor and
 * up). One at a time, in one of the operator's read slots for as long as it reads; a
 * second start meanwhile is refused ERR-DecisionUnavailable, as a second backup is.
 */
import type { FastifyInstance } from 'fastify';
import { refuse } from '../../src/errors.js';
import type { Wire } from '../../src/queries/wire.js';
import { dataDirIds } from '../check.js';
import { checkProblemsListedMax } from '../constants.js';
import { callerOf, requireOperator } from '../http/auth.js';
import { wireReply } from '../http/replies.js';
import { commandHeaders, noQuery, object, responses, str, uintNumber } from '../http/schemas.js';
import { type CheckRun, OnlineCheck } from '../online-check.js';
import type { RouteContext } from './context.js';

const runSchema = object(
  {
    state: { enum: ['none', 'running', 'consistent', 'damaged', 'incomplete', 'failed'], description: 'none: no check since the daemon started; consistent and damaged as ledgerd check says; incomplete: stopped (checkTimeMaxMs, shutdown); failed: the check itself broke' },
    started_at: uintNumber('ms'),
    finished_at: uintNumber('ms'),
    accounts: uintNumber('accounts checked so far'),
    balances: uintNumber('balances checked so far'),
    postings: uintNumber('journal entries folded so far'),
    checkpoints: uintNumber('checkpoints verified (once finished)'),
    view: uintNumber('the journal position of the snapshot checked (once finished)'),
    problem_count: uintNumber('problems found (once finished)'),
    problems: { type: 'array', maxItems: checkProblemsListedMax, items: { type: 'string' }, description: `the first ${checkProblemsListedMax} problems, one line each as ledgerd check prints them` },
    reason: str('why it stopped incomplete or failed, or why the book cannot be read through'),
  },
  ['state'],
);

function runView(run: CheckRun | null): Wire {
  if (run === null) return { state: 'none' };
  const { report } = run;
  return {
    state: run.state,
    started_at: run.startedAtMs,
    ...(run.finishedAtMs === null ? {} : { finished_at: run.finishedAtMs }),
    accounts: run.counts.accounts,
    balances: run.counts.balances,
    postings: run.counts.postings,
    ...(report === null ? {} : { checkpoints: report.checkpoints, view: report.view, problem_count: report.problemCount, problems: [...report.problems] }),
    ...(run.reason === null ? {} : { reason: run.reason }),
  };
}

export function checkRoutes(app: FastifyInstance, { kernel, config, clock }: RouteContext): void {
  const checks = new OnlineCheck(clock, config.checkTimeMaxMs);
  // A check still reading when the daemon stops ends at its next page: the store closes after it.
  app.addHook('preClose', () => checks.stop());
  app.post(
    '/v1/ops/check',
    {
      schema: {
        operationId: 'startBookCheck',
        summary: "Operator: check the served book as ledgerd check does, on one snapshot, in the background (one at a time); follow it with GET /v1/ops/check",
        headers: commandHeaders,
        querystring: noQuery,
        body: object({}),
        response: responses({ 202: runSchema }),
      },
    },
    async (request, reply) => {
      requireOperator(request, kernel, 'checking the book');
      if (checks.running) refuse('ERR-DecisionUnavailable', 'a check of the book is running already; follow it with GET /v1/ops/check (ledgerctl ops check --follow) and retry when it ends');
      const ids = await dataDirIds(config.dataDir);
      const slots = request.server.snapshots;
      const slot = await slots.acquire(slots.principal(callerOf(request).principal));
      // Checked again: another start may have taken the turn while this one waited for its slot.
      if (checks.running) {
        slot.release();
        refuse('ERR-DecisionUnavailable', 'a check of the book is running already; follow it with GET /v1/ops/check and retry when it ends');
      }
      request.log.info('online check started');
      const run = checks.start(kernel.storeForChecks, ids, () => {
        slot.release();
        const ended = checks.latest!;
        const line = { state: ended.state, problems: ended.report?.problemCount ?? null, ms: (ended.finishedAtMs ?? 0) - ended.startedAtMs, reason: ended.reason };
        if (ended.state === 'consistent') app.log.info(line, 'online check ended');
        else app.log.error(line, 'online check ended');
      });
      return wireReply(reply, runView(run), 202);
    },
  );
  app.get(
    '/v1/ops/check',
    { schema: { operationId: 'getBookCheck', summary: 'The latest online check since the daemon started: running (with counts so far) or its outcome (auditor and up)', querystring: noQuery, response: responses({ 200: runSchema }) } },
    async (request, reply) => {
      requireOperator(request, kernel, 'the book check');
      return wireReply(reply, runView(checks.latest));
    },
  );
}
