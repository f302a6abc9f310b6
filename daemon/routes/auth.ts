/**
 * Signing in (spec endpoints 1 and 2, CONTRACT 5): challenges and passkey sign-in,
 * both without a bearer, and GET /v1/whoami. The daemon draws the randomness; the
 * kernel decides what is state (a challenge taken once, the counter, the session).
 * Every failed sign-in is 401 ERR-CredentialInvalid, whatever went wrong.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { challengeView, issueChallenge } from '../../src/auth/challenges.js';
import { challengeBytesMin, tokenBytesMin } from '../../src/auth/constants.js';
import { drawSession, sessionView } from '../../src/auth/keys.js';
import { type RelyingParty, ceremonyChallenge, parsePasskeyAssertion, verifyPasskeyAssertion } from '../../src/auth/webauthn.js';
import { refuse } from '../../src/errors.js';
import { parseCredentialId, parseIdentityId } from '../../src/values.js';
import { callerOf } from '../http/auth.js';
import { wireReply } from '../http/replies.js';
import { credentialId, identityId, noQuery, nullable, object, responses, str, uintNumber } from '../http/schemas.js';
import type { RouteContext } from './context.js';

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

export function authRoutes(app: FastifyInstance, { kernel, config, clock }: RouteContext): void {
  const rp = relyingPartyOf(config);

  app.post(
    '/v1/auth/challenge',
    {
      config: { public: true },
      schema: {
        summary: 'A challenge for one ceremony: sign-in (authenticate) or registration (register); no bearer',
        querystring: noQuery,
        body: object({ purpose: { enum: ['authenticate', 'register'] }, identity: nullable(identityId) }, ['purpose']),
        response: responses({ 200: challengeSchema }),
      },
    },
    async (request, reply) => {
      const body = request.body as { purpose: 'authenticate' | 'register'; identity?: string | null };
      const identity = body.identity === undefined || body.identity === null ? null : parseIdentityId(body.identity);
      // The kernel holds the outstanding count and refuses at its bound; 0 here defers to it.
      const issued = issueChallenge({ purpose: body.purpose, identity, randomBytes: randomBytes(challengeBytesMin), nowMs: clock(), outstanding: 0 });
      if ('error' in issued) refuse(issued.error, issued.description);
      const refused = await kernel.decideDirect({ type: 'issue_challenge', challenge: issued.challenge, record: issued.record });
      if (refused !== null) refuse(refused.error, refused.description);
      return wireReply(reply, { ...challengeView(issued.challenge, issued.record) });
    },
  );

  app.post(
    '/v1/auth/passkey',
    {
      config: { public: true },
      schema: {
        summary: 'Sign in with a passkey assertion over an authenticate challenge; answers a session',
        querystring: noQuery,
        body: object({ assertion: assertionSchema, credential: credentialId }, ['assertion', 'credential']),
        response: responses({ 200: sessionSchema }),
      },
    },
    async (request, reply) => {
      const body = request.body as { assertion: unknown; credential: unknown };
      const assertion = parsePasskeyAssertion(body.assertion);
      const id = parseCredentialId(body.credential);
      const stored = await kernel.credential(id);
      if (stored === undefined || stored.scheme !== 'webauthn-es256' || stored.verifier === null || stored.webauthnId === null) {
        refuse('ERR-CredentialInvalid', 'no passkey credential by that id');
      }
      const challenge = ceremonyChallenge(assertion.client_data_json);
      if (typeof challenge !== 'string') refuse('ERR-CredentialInvalid', challenge.description);
      const verified = await verifyPasskeyAssertion(assertion, { challenge, rp, stored: { rawId: stored.webauthnId, publicKey: stored.verifier, counter: stored.counter } });
      if ('error' in verified) refuse('ERR-CredentialInvalid', verified.description);
      const session = drawSession({
        randomBytes: randomBytes(tokenBytesMin),
        credential: id,
        principal: stored.identity,
        scheme: 'webauthn-es256',
        nowMs: clock(),
        lifetimeMs: config.sessionLifetimeMs,
      });
      const refused = await kernel.decideDirect({ type: 'sign_in', credential: id, challenge, counter: verified.counter, session: session.grant });
      if (refused !== null) refuse(refused.error === 'ERR-DecisionUnavailable' ? refused.error : 'ERR-CredentialInvalid', refused.description);
      return wireReply(reply, { ...sessionView(session.token, session.grant) });
    },
  );

  app.get(
    '/v1/whoami',
    { schema: { summary: 'Who the bearer presented authenticates', querystring: noQuery, response: responses({ 200: whoamiSchema }) } },
    async (request, reply) => {
      const caller = callerOf(request);
      const bearer = request.bearer!;
      return wireReply(reply, { principal: caller.principal, credential: caller.credential, scheme: bearer.scheme, expires_at: bearer.expiresAtMs });
    },
  );
}
