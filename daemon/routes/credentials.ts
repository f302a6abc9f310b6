/**
 * Credentials and identities (spec endpoint 3, CONTRACT 5): POST /v1/credentials into
 * the caller's own set (or, for the identities principal, the set `on-behalf-of`
 * names) and POST /v1/identities. Both are commands. A passkey's attestation is
 * checked here, at the edge, against the register challenge its client data names, for
 * the configured relying party, and that challenge must be able to serve now: else 401
 * ERR-CredentialInvalid. Taking the challenge is the decision's, in order with every
 * other use, so of two registrations racing for one challenge the later one is the
 * operation's error (ERR-CredentialInvalid).
 *
 * An `api-key` is drawn here; only its hash is submitted, and the clear key goes out
 * on the deciding reply only (api-keys.ts).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consumeChallenge } from '../../src/auth/challenges.js';
import { tokenBytesMin } from '../../src/auth/constants.js';
import { drawApiKey, parseKeyVerifier } from '../../src/auth/keys.js';
import { ceremonyChallenge, parsePasskeyRegistration, verifyPasskeyRegistration } from '../../src/auth/webauthn.js';
import { accountsPerIdentityMax } from '../../src/constants.js';
import type { Role, Scheme } from '../../src/model/model.js';
import { memberName, memberRole } from './members.js';
import { refuse } from '../../src/errors.js';
import type { Command, NewCredential, Operation } from '../../src/model/model.js';
import { type IdentityId, parseAccountId, parseIdentityId } from '../../src/model/values.js';
import { isTerminal } from '../../src/queries/views.js';
import { ApiKeyHandoff, decisionWaitMs } from '../http/api-keys.js';
import { callerOf } from '../http/auth.js';
import { commandAnswer, isRepeat, submitFrom } from '../http/command.js';
import { accountId, commandHeaders, commandReplySchema, noQuery, nullable, object, reference, responses, str } from '../http/schemas.js';
import { relyingPartyOf } from './auth.js';
import { type RouteContext, withSlot } from './context.js';

const replies = responses({ 200: commandReplySchema, 202: commandReplySchema });
const scheme = { enum: ['key', 'webauthn-es256', 'api-key', null] };
const verifier = nullable(str('key: the 32-byte ed25519 public key as hex', { pattern: '^[0-9a-fA-F]{64}$' }));
const passkey = object({ attestation_object: str('base64url'), client_data_json: str('base64url') }, ['attestation_object', 'client_data_json']);

const proposedApiKey =
  "an api-key member cannot be added by a proposal: its key would be drawn at approval and go to the approver, not to the member. Propose the member's own credential: its passkey (scheme webauthn-es256, made by the member: ledgerctl ops members prepare) or ed25519 public key (scheme key, verifier)";

type RegistrationCommand = Extract<Command, { type: 'create_identity' | 'register_credential' }>;

interface CredentialBody {
  readonly scheme?: Scheme | null;
  readonly verifier?: string | null;
  readonly passkey?: unknown;
}

/** Each scheme takes its own material and no other's. */
function onlyMaterial(body: CredentialBody, scheme: Scheme): void {
  const has = (v: unknown) => v !== undefined && v !== null;
  if (scheme !== 'key' && has(body.verifier)) refuse('ERR-MalformedCommand', `verifier goes with scheme key, not ${scheme}`);
  if (scheme !== 'webauthn-es256' && has(body.passkey)) refuse('ERR-MalformedCommand', `passkey goes with scheme webauthn-es256, not ${scheme}`);
}

export function credentialRoutes(app: FastifyInstance, { kernel, config, clock }: RouteContext): void {
  const rp = relyingPartyOf(config);
  const handoff = new ApiKeyHandoff(clock);

  /** The credential a body registers, verified, and the clear API key when one was drawn. */
  async function newCredential(body: CredentialBody): Promise<{ credential: NewCredential; apiKey: string | null }> {
    const scheme = body.scheme ?? 'key';
    onlyMaterial(body, scheme);
    const none = { tokenHash: null, challenge: null, webauthnId: null, counter: 0 };
    if (scheme === 'key') {
      if (body.verifier === undefined || body.verifier === null) refuse('ERR-MalformedCommand', 'scheme key needs its verifier');
      return { credential: { scheme, verifier: parseKeyVerifier(body.verifier), ...none }, apiKey: null };
    }
    if (scheme === 'api-key') {
      const drawn = drawApiKey(randomBytes(tokenBytesMin));
      return { credential: { scheme, verifier: null, ...none, tokenHash: drawn.hash }, apiKey: drawn.token };
    }
    const registration = parsePasskeyRegistration(body.passkey);
    const challenge = ceremonyChallenge(registration.client_data_json);
    if (typeof challenge !== 'string') refuse('ERR-CredentialInvalid', challenge.description);
    const key = await verifyPasskeyRegistration(registration, { challenge, rp });
    if ('error' in key) refuse('ERR-CredentialInvalid', key.description);
    return { credential: { scheme, verifier: key.publicKey, tokenHash: null, challenge, webauthnId: key.rawId, counter: key.counter }, apiKey: null };
  }

  /**
   * A passkey registration over a challenge that cannot serve now (unknown, used,
   * expired, for sign-in, bound to another identity's set) is refused at once, 401,
   * unless it repeats a command already taken (then the stored reply answers it). The
   * decision checks again and takes the challenge, in order with every other use.
   */
  async function refuseStaleChallenge(request: FastifyRequest, command: RegistrationCommand): Promise<void> {
    const { challenge } = command.credential;
    if (challenge === null || (await isRepeat(kernel, request))) return;
    const identity = command.type === 'register_credential' ? command.identity : null;
    const record = await withSlot(request, () => kernel.challenge(challenge, identity));
    const taken = 'error' in record ? record : consumeChallenge(record, { purpose: 'register', identity, nowMs: clock() });
    if ('error' in taken) refuse('ERR-CredentialInvalid', taken.description);
  }

  /**
   * Submits a registration and answers it. A fresh API key waits (bounded) for its
   * decision so the acknowledgement is usually the deciding reply; else the first
   * terminal repeat collects it.
   */
  async function register(request: FastifyRequest, reply: FastifyReply, command: RegistrationCommand, apiKey: string | null): Promise<string> {
    await refuseStaleChallenge(request, command);
    const { operation, repeat } = await submitFrom(kernel, request, command);
    // A key goes out only with a registration that completed; a rejected one issued none.
    const issued = (op: Operation, key: string | null) => (op.state === 'Completed' ? key : null);
    if (apiKey === null || repeat) return commandAnswer(reply, operation, isTerminal(operation) ? issued(operation, handoff.take(operation.ref)) : null);
    const decided = await kernel.decision(operation.ref, decisionWaitMs);
    if (decided === null) {
      handoff.hold(operation.ref, apiKey);
      return commandAnswer(reply, operation);
    }
    return commandAnswer(reply, decided, issued(decided, apiKey));
  }

  app.post(
    '/v1/credentials',
    {
      schema: {
        operationId: 'registerCredential', summary: "Register a credential into the caller's set, or (identities principal) into the set on-behalf-of names",
        headers: commandHeaders,
        querystring: noQuery,
        body: object(
          {
            marker: { enum: ['ordinary'] },
            scheme,
            verifier,
            passkey: nullable(passkey),
            scope: { type: ['array', 'null'], maxItems: accountsPerIdentityMax, items: accountId },
            reference,
          },
          ['marker'],
        ),
        response: replies,
      },
    },
    async (request, reply) => {
      const body = request.body as CredentialBody & { scope?: unknown[] | null };
      const header = request.headers['on-behalf-of'];
      const identity: IdentityId = header === undefined ? callerOf(request).principal : parseIdentityId(header, 'on-behalf-of');
      const scope = body.scope === undefined || body.scope === null ? null : body.scope.map((a, i) => parseAccountId(a, `scope[${i}]`));
      if (scope !== null && new Set(scope).size !== scope.length) refuse('ERR-MalformedCommand', 'scope names an account twice');
      const { credential, apiKey } = await newCredential(body);
      return register(request, reply, { type: 'register_credential', identity, credential, scope }, apiKey);
    },
  );

  app.post(
    '/v1/ops/members',
    {
      schema: {
        operationId: 'addMember', summary: "Admin: add a member to the operator, a credential of the operator's set with a name and a role (CONTRACT 13)",
        headers: commandHeaders,
        querystring: noQuery,
        body: object({ name: memberName, role: memberRole, scheme, verifier, passkey: nullable(passkey), reference }, ['name', 'role']),
        response: replies,
      },
    },
    async (request, reply) => {
      const body = request.body as CredentialBody & { name: string; role: Role };
      if (callerOf(request).principal !== kernel.principals.operator) refuse('ERR-NotAuthorised', 'the initiating principal holds no authority that covers members of the operator (operator only)');
      if (request.headers['on-behalf-of'] !== undefined) refuse('ERR-MalformedCommand', 'members are added by the operator for itself: no on-behalf-of');
      // A key drawn at approval would be on the approver's reply, never the member-to-be's: whoever
      // approves would hold a member's key, and one person two members is no dual control.
      if (request.dispatch !== null && (body.scheme ?? 'key') === 'api-key') refuse('ERR-MalformedCommand', proposedApiKey);
      const { credential, apiKey } = await newCredential(body);
      return register(request, reply, { type: 'register_credential', identity: kernel.principals.operator, credential, scope: null, member: { name: body.name, role: body.role } }, apiKey);
    },
  );

  app.post(
    '/v1/identities',
    {
      schema: {
        operationId: 'createIdentity', summary: 'Create an identity with its first credential (identities principal)',
        headers: commandHeaders,
        querystring: noQuery,
        body: object({ scheme, verifier, passkey: nullable(passkey), reference }, ['scheme']),
        response: replies,
      },
    },
    async (request, reply) => {
      const { credential, apiKey } = await newCredential(request.body as CredentialBody);
      return register(request, reply, { type: 'create_identity', credential }, apiKey);
    },
  );
}
