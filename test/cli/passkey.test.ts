/** The software passkey's bytes pass a real WebAuthn verifier (@simplewebauthn/server), as a browser's would. */
import { randomBytes } from 'node:crypto';
import { verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import { describe, expect, it } from 'vitest';
import { assertion, createPasskey, registration } from '../../cli/passkey.js';

const rpId = 'localhost';
const origin = 'http://localhost:8470';
const challenge = () => randomBytes(32).toString('base64url');

describe('software passkey', () => {
  it('registers and signs in under a WebAuthn verifier, with user verification and a rising counter', async () => {
    const passkey = createPasskey(rpId, origin);
    const registerChallenge = challenge();
    const made = registration(passkey, registerChallenge);
    const registered = await verifyRegistrationResponse({
      response: { id: passkey.rawId, rawId: passkey.rawId, type: 'public-key', clientExtensionResults: {}, response: { attestationObject: made.attestation_object, clientDataJSON: made.client_data_json } },
      expectedChallenge: registerChallenge,
      expectedOrigin: origin,
      expectedRPID: rpId,
      requireUserVerification: true,
    });
    expect(registered.verified).toBe(true);
    const { credential } = registered.registrationInfo!;
    expect(credential.id).toBe(passkey.rawId);

    let counter = credential.counter;
    for (const signCount of [1, 2]) {
      const signInChallenge = challenge();
      const signed = assertion(passkey, signInChallenge, signCount);
      const verified = await verifyAuthenticationResponse({
        response: {
          id: signed.raw_id,
          rawId: signed.raw_id,
          type: 'public-key',
          clientExtensionResults: {},
          response: { authenticatorData: signed.authenticator_data, clientDataJSON: signed.client_data_json, signature: signed.signature },
        },
        expectedChallenge: signInChallenge,
        expectedOrigin: origin,
        expectedRPID: rpId,
        credential: { ...credential, counter },
        requireUserVerification: true,
      });
      expect(verified.verified).toBe(true);
      expect(verified.authenticationInfo.newCounter).toBe(signCount);
      counter = verified.authenticationInfo.newCounter;
    }
  });

  it('is refused for another relying party', async () => {
    const passkey = createPasskey('evil.example', origin);
    const c = challenge();
    const made = registration(passkey, c);
    await expect(
      verifyRegistrationResponse({
        response: { id: passkey.rawId, rawId: passkey.rawId, type: 'public-key', clientExtensionResults: {}, response: { attestationObject: made.attestation_object, clientDataJSON: made.client_data_json } },
        expectedChallenge: c,
        expectedOrigin: origin,
        expectedRPID: rpId,
      }),
    ).rejects.toThrow(/RP ID/);
  });
});
