/**
 * Custody and the account and identity lifecycle (spec endpoints 4, 17, 22; CONTRACT 8, 10):
 * recovery terms and mechanisms, reclaim, pending recoveries and successions, freeze,
 * close and identity restriction. All but the reads are commands, decided by the kernel
 * (src/custody/). A reclaim's passkey assertion is verified here, at the edge, against a
 * live `authenticate` challenge (401 ERR-CredentialInvalid otherwise) once the account is
 * found reclaimable; the decision takes the challenge, in order with every other use.
 * A key proof is checked by the precheck and again by the decision, over the epoch it finds.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { consumeChallenge } from '../../src/auth/challenges.js';
import { parseJustification } from '../../src/auth/grants.js';
import { ceremonyChallenge, parsePasskeyAssertion, verifyPasskeyAssertion } from '../../src/auth/webauthn.js';
import { reclaimGate } from '../../src/custody/decide-custody.js';
import { mechanismsOf } from '../../src/custody/terms.js';
import { refuse } from '../../src/errors.js';
import type { CustodyCommand, ReclaimProof } from '../../src/model/model.js';
import { type AccountId, type CredentialId, parseAccountId, parseCredentialId, parseIdentityId } from '../../src/model/values.js';
import { mechanismsView } from '../../src/queries/views.js';
import { callerOf } from '../http/auth.js';
import { acknowledge, isRepeat } from '../http/command.js';
import { wireReply } from '../http/replies.js';
import { accountId, commandHeaders, commandReplySchema, credentialId, identityId, mechanismsSchema, noQuery, nullable, object, operationRef, recoveryTermsSchema, reference, responses, str } from '../http/schemas.js';
import { assertionSchema, relyingPartyOf } from './auth.js';
import { type RouteContext, withSlot, withView } from './context.js';
import { reclaimSignatureLengthMax } from '../constants.js';

const replies = responses({ 200: commandReplySchema, 202: commandReplySchema });
const digestHex = str('digest, 32 bytes as lowercase hex', { pattern: '^[0-9a-f]{64}$' });
const justified = object({ justification: str('why (required: ERR-JustificationRequired)'), reference }, []);

export function custodyRoutes(app: FastifyInstance, { kernel, config, clock }: RouteContext): void {
  const rp = relyingPartyOf(config);
  const terms = kernel.recoveryTerms;
  const accountOf = (request: FastifyRequest) => parseAccountId((request.params as { account: string }).account);

  /** A command route on one account (or identity): its schema, and the command its body makes. */
  function command(path: string, operationId: string, summary: string, body: Record<string, unknown>, make: (request: FastifyRequest) => CustodyCommand | Promise<CustodyCommand>): void {
    const params = path.includes(':identity') ? object({ identity: identityId }, ['identity']) : path.includes(':pending') ? object({ account: accountId, pending: operationRef }, ['account', 'pending']) : object({ account: accountId }, ['account']);
    app.post(path, { schema: { operationId, summary, headers: commandHeaders, params, querystring: noQuery, body, response: replies } }, async (request, reply) =>
      acknowledge(kernel, request, reply, await make(request)),
    );
  }

  app.get(
    '/v1/identities/:identity/recovery-terms',
    {
      schema: {
        operationId: 'getRecoveryTerms', summary: "An identity's recovery terms and their digest (what `acknowledged` names): the identity's, the identities principal's and the operator's to read",
        params: object({ identity: identityId }, ['identity']),
        querystring: noQuery,
        response: responses({ 200: recoveryTermsSchema }),
      },
    },
    async (request, reply) => {
      const identity = parseIdentityId((request.params as { identity: string }).identity);
      const { principal } = callerOf(request);
      const { operator, identities } = kernel.principals;
      const known = await withView(request, async (view) => (await view.identity(identity)) !== undefined);
      if (!known || (principal !== identity && principal !== operator && principal !== identities)) {
        refuse('ERR-NotAuthorised', `the initiating principal holds no authority that covers the recovery terms of ${identity}`);
      }
      return wireReply(reply, mechanismsView(terms, identity));
    },
  );

  app.get(
    '/v1/accounts/:account/recovery-mechanisms',
    {
      schema: {
        operationId: 'getRecoveryMechanisms', summary: "An account's recovery mechanisms and their digest (a delegated account: its owner's current terms): the owner's, the operator's and the identities principal's to read",
        params: object({ account: accountId }, ['account']),
        querystring: noQuery,
        response: responses({ 200: mechanismsSchema }),
      },
    },
    async (request, reply) => {
      const account = await withView(request, (view) => view.reachableAccount(callerOf(request), accountOf(request)));
      return wireReply(reply, mechanismsView(mechanismsOf(account, terms)));
    },
  );

  /**
   * A passkey proof, verified here once the account is found reclaimable (so the state is
   * answered before the proof): an assertion by the stored passkey over a challenge that
   * can serve a sign-in now. A repeat under the client key is answered from the first.
   */
  async function passkeyProof(request: FastifyRequest, account: AccountId, credential: CredentialId, acknowledged: string | null, body: unknown): Promise<ReclaimProof> {
    const assertion = parsePasskeyAssertion(body);
    const challenge = ceremonyChallenge(assertion.client_data_json);
    if (typeof challenge !== 'string') refuse('ERR-CredentialInvalid', challenge.description);
    if (await isRepeat(kernel, request)) return { scheme: 'webauthn-es256', challenge, counter: 0 };
    const gate = await withView(request, async (view) => reclaimGate({ account, acknowledged }, callerOf(request), await view.account(account), { principals: kernel.principals, terms }));
    if ('error' in gate) refuse(gate.error, gate.description);
    const stored = await withSlot(request, () => kernel.credential(credential));
    if (stored === undefined || stored.scheme !== 'webauthn-es256' || stored.identity !== gate.owner) refuse('ERR-CredentialInvalid', `proof_credential ${credential} is not a passkey of the owner's set`);
    const record = await withSlot(request, () => kernel.challenge(challenge, null));
    const taken = 'error' in record ? record : consumeChallenge(record, { purpose: 'authenticate', identity: null, nowMs: clock() });
    if ('error' in taken) refuse('ERR-CredentialInvalid', taken.description);
    const verified = await verifyPasskeyAssertion(assertion, { challenge, rp, stored: { rawId: stored.webauthnId!, publicKey: stored.verifier!, counter: stored.counter } });
    if ('error' in verified) refuse('ERR-CredentialInvalid', verified.description);
    return { scheme: 'webauthn-es256', challenge, counter: verified.counter };
  }

  command(
    '/v1/accounts/:account/custody/reclaim',
    'reclaimCustody',
    'Reclaim custody (delegated to owned), by the owner, with a key signature or a passkey assertion',
    object(
      {
        proof_credential: credentialId,
        acknowledged: nullable(digestHex),
        assertion: nullable(assertionSchema),
        signature: nullable(str('key: 64-byte ed25519 signature, hex, over ledger-reclaim:v1:<account>:<epoch>', { maxLength: reclaimSignatureLengthMax })),
        reference,
      },
      ['proof_credential'],
    ),
    async (request) => {
      const body = request.body as { proof_credential: string; acknowledged?: string | null; assertion?: unknown; signature?: string | null };
      const account = accountOf(request);
      const credential = parseCredentialId(body.proof_credential, 'proof_credential');
      const acknowledged = body.acknowledged ?? null;
      const hasAssertion = body.assertion !== undefined && body.assertion !== null;
      const hasSignature = body.signature !== undefined && body.signature !== null;
      if (hasAssertion && hasSignature) refuse('ERR-MalformedCommand', 'a reclaim proves with a signature or an assertion, not both');
      if (!hasAssertion && !hasSignature) refuse('ERR-CredentialInvalid', 'a reclaim needs a proof: signature (key) or assertion (passkey)');
      const proof: ReclaimProof = hasSignature ? { scheme: 'key', signature: body.signature!.toLowerCase() } : await passkeyProof(request, account, credential, acknowledged, body.assertion);
      return { type: 'reclaim', account, credential, acknowledged, proof };
    },
  );

  command(
    '/v1/accounts/:account/custody/changes',
    'openCustodyChange',
    "Open a recovery (by the account's recovery authority, sweeping into `to`) or a succession (by the owner)",
    object({ kind: { enum: ['recovery', 'succession'] }, new_owner: identityId, to: nullable(accountId), reference }, ['kind', 'new_owner']),
    (request) => {
      const body = request.body as { kind: 'recovery' | 'succession'; new_owner: string; to?: string | null };
      const to = body.to === undefined || body.to === null ? null : parseAccountId(body.to, 'to');
      if (body.kind === 'recovery' && to === null) refuse('ERR-MalformedCommand', 'a recovery names `to`, the new owner\'s account that receives the sweep');
      if (body.kind === 'succession' && to !== null) refuse('ERR-MalformedCommand', 'a succession hands the account over in place: no `to`');
      return { type: 'open_custody_change', account: accountOf(request), kind: body.kind, newOwner: parseIdentityId(body.new_owner, 'new_owner'), to };
    },
  );

  for (const [verb, type] of [['cancel', 'cancel_custody_change'], ['complete', 'complete_custody_change']] as const) {
    command(`/v1/accounts/:account/custody/changes/:pending/${verb}`, `${verb}CustodyChange`, verb === 'cancel' ? 'Cancel a pending change (the owner, or whoever opened it)' : 'Complete a pending change once effective_at is reached (whoever opened it)', object({ reference }), (request) => ({
      type,
      account: accountOf(request),
      pending: (request.params as { pending: string }).pending,
    }));
  }

  for (const [verb, type] of [['freeze', 'freeze_account'], ['unfreeze', 'unfreeze_account']] as const) {
    command(`/v1/accounts/:account/${verb}`, `${verb}Account`, `${verb === 'freeze' ? 'Freeze' : 'Unfreeze'} an account (operator, with a justification)`, justified, (request) => ({
      type,
      account: accountOf(request),
      justification: parseJustification((request.body as { justification?: unknown }).justification, `${verb === 'freeze' ? 'freezing' : 'unfreezing'} an account`),
    }));
  }

  command('/v1/accounts/:account/close', 'closeAccount', 'Close an empty account for good (owner or operator)', object({ reference }), (request) => ({ type: 'close_account', account: accountOf(request) }));

  for (const [verb, type] of [['restrict', 'restrict_identity'], ['unrestrict', 'unrestrict_identity']] as const) {
    command(`/v1/ops/identities/:identity/${verb}`, `${verb}Identity`, `${verb === 'restrict' ? 'Restrict' : 'Lift the restriction of'} an identity (operator, with a justification)`, justified, (request) => ({
      type,
      identity: parseIdentityId((request.params as { identity: string }).identity),
      justification: parseJustification((request.body as { justification?: unknown }).justification, `${verb === 'restrict' ? 'restricting' : 'unrestricting'} an identity`),
    }));
  }
}
