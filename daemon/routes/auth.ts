/**
 * Signing in (spec endpoints 1 and 2, CONTRACT 5): challenges and passkey sign-in,
 * both without a bearer, and GET /v1/whoami. The daemon draws the randomness; the
 * kernel MACs challenges (stateless until used) and decides what is state (a challenge
 * taken once, the counter, the session).
 * Every failed sign-in is 401 ERR-CredentialInvalid with one description, whatever
 * went wrong (the reason is logged).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { challengeView } from '../../src/auth/challenges.js';
import { challengeBytesMin, tokenBytesMin } from '../../src/auth/constants.js';
import { type SessionView, drawSession, sessionView } from '../../src/auth/keys.js';
import { type PasskeyAssertion, type RelyingParty, ceremonyChallenge, decoyPasskeyKey, parsePasskeyAssertion, verifyPasskeyAssertion } from '../../src/auth/webauthn.js';
import { type Refusal, refusal, refuse } from '../../src/errors.js';
import { type CredentialId, parseCredentialId, parseIdentityId } from '../../src/model/values.js';
import { callerOf } from '../http/auth.js';
import { wireReply } from '../http/replies.js';
import { credentialId, identityId, noQuery, nullable, object, responses, str, uintNumber } from '../http/schemas.js';
import { type RouteContext, withSourceSlot } from './context.js';

const base64url = (description: string) => str(description, { pattern: '^[A-Za-z0-9_-]+$' });

const challengeSchema = object({ challenge: base64url('pass it decoded as the ceremony challenge'), expires_at: uintNumber('ms') }, ['challenge', 'expires_at']);
const sessionSchema = object(
  { session: str('session token, a secret'), expires_at: uintNumber('ms'), principal: identityId, credential: credentialId },
  ['session', 'expires_at', 'principal', 'credential'],
);
const whoamiSchema = object(
  { principal: identityId, credential: credentialId, scheme: { enum: ['key', 'webauthn-es256', 'api-key'] }, expires_at: { type: ['integer', 'null'] } },
  ['principal', 'credential', 'scheme', 'expires_at'],
);
export const assertionSchema = object(
  {
    authenticator_data: base64url('authenticator data'),
    client_data_json: base64url('client data JSON'),
    raw_id: base64url('credential id'),
    signature: base64url('DER ES256 signature'),
  },
  ['authenticator_data', 'client_data_json', 'raw_id', 'signature'],
);

/** The relying party passkeys are verified for (CONTRACT 1). */
export const relyingPartyOf = (config: RouteContext['config']): RelyingParty => ({ rpId: config.relyingParty.id, origin: config.relyingParty.origin });

const signInRefused = 'the passkey sign-in failed: the credential is unknown, or the assertion does not verify over a live authenticate challenge';

export function authRoutes(app: FastifyInstance, { kernel, config, clock }: RouteContext): void {
  const rp = relyingPartyOf(config);
  const decoy = decoyPasskeyKey();

  /** Verifies a sign-in, has the kernel decide it, and gives the session, or why not. */
  async function signIn(request: FastifyRequest, assertion: PasskeyAssertion, id: CredentialId): Promise<SessionView | Refusal> {
    const stored = await withSourceSlot(request, () => kernel.credential(id));
    const known = stored !== undefined && stored.scheme === 'webauthn-es256' && stored.verifier !== null && stored.webauthnId !== null;
    const challenge = ceremonyChallenge(assertion.client_data_json);
    if (typeof challenge !== 'string') return challenge;
    // An unknown credential is verified against the decoy (its id made to match, so the
    // signature check runs): the refusal then takes as long as for a known one.
    const key = known ? { rawId: stored.webauthnId!, publicKey: stored.verifier!, counter: stored.counter } : { ...decoy, rawId: assertion.raw_id };
    const verified = await verifyPasskeyAssertion(assertion, { challenge, rp, stored: key });
    if (!known) return refusal('ERR-CredentialInvalid', 'no passkey credential by that id');
    if ('error' in verified) return verified;
    const session = drawSession({
      randomBytes: randomBytes(tokenBytesMin),
      credential: id,
      principal: stored.identity,
      scheme: 'webauthn-es256',
      nowMs: clock(),
      lifetimeMs: config.sessionLifetimeMs,
    });
    const refused = await kernel.decideDirect({ type: 'sign_in', credential: id, challenge, counter: verified.counter, session: session.grant });
    return refused ?? sessionView(session.token, session.grant);
  }

  app.post(
    '/v1/auth/challenge',
    {
      config: { public: true },
      schema: {
        operationId: 'createChallenge', summary: 'A challenge for one ceremony: sign-in (authenticate) or registration (register); no bearer',
        querystring: noQuery,
        body: object({ purpose: { enum: ['authenticate', 'register'] }, identity: nullable(identityId) }, ['purpose']),
        response: responses({ 200: challengeSchema }),
      },
    },
    async (request, reply) => {
      const body = request.body as { purpose: 'authenticate' | 'register'; identity?: string | null };
      const identity = body.identity === undefined || body.identity === null ? null : parseIdentityId(body.identity);
      // MAC'd, not stored: issuing costs no state, so no flood of it can lock anyone out.
      const issued = kernel.issueChallenge({ purpose: body.purpose, identity, randomBytes: randomBytes(challengeBytesMin), nowMs: clock() });
      if ('error' in issued) refuse(issued.error, issued.description);
      return wireReply(reply, { ...challengeView(issued.challenge, issued.record) });
    },
  );

  app.post(
    '/v1/auth/passkey',
    {
      config: { public: true },
      schema: {
        operationId: 'signInWithPasskey', summary: 'Sign in with a passkey assertion over an authenticate challenge; answers a session',
        querystring: noQuery,
        body: object({ assertion: assertionSchema, credential: credentialId }, ['assertion', 'credential']),
        response: responses({ 200: sessionSchema }),
      },
    },
    async (request, reply) => {
      const body = request.body as { assertion: unknown; credential: unknown };
      const outcome = await signIn(request, parsePasskeyAssertion(body.assertion), parseCredentialId(body.credential));
      if ('session' in outcome) return wireReply(reply, { ...outcome });
      if (outcome.error === 'ERR-DecisionUnavailable') refuse(outcome.error, outcome.description);
      // One answer for every failure, so an anonymous caller learns nothing (not even
      // whether the credential exists); the reason goes to the log, which holds no secret here.
      request.log.info({ reason: outcome.description }, 'passkey sign-in refused');
      refuse('ERR-CredentialInvalid', signInRefused);
    },
  );

  app.get(
    '/v1/whoami',
    { schema: { operationId: 'whoAmI', summary: 'Who the bearer presented authenticates', querystring: noQuery, response: responses({ 200: whoamiSchema }) } },
    async (request, reply) => {
      const caller = callerOf(request);
      const bearer = request.bearer!;
      return wireReply(reply, { principal: caller.principal, credential: caller.credential, scheme: bearer.scheme, expires_at: bearer.expiresAtMs });
    },
  );
}
