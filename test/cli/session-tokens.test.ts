/** A passkey sign-in never drops a profile's API key: the secrets' token transitions. */
import { describe, expect, it } from 'vitest';
import { presentedToken, withApiKeyToken, withSessionToken, withoutSession } from '../../cli/profiles.js';

describe('profile tokens', () => {
  it('keeps the API key aside under a session, presents it again once the session has expired, and restores it on sign-out', () => {
    const keyed = withApiKeyToken({}, 'api-key-1');
    const session = withSessionToken(keyed, 'session-1', 1_000);
    expect(session).toMatchObject({ token: 'session-1', sessionExpiresAtMs: 1_000, apiKey: 'api-key-1' });
    expect(presentedToken(session, 999)).toBe('session-1');
    expect(presentedToken(session, 1_000)).toBe('api-key-1');
    // A second sign-in keeps the same key aside, not the first session.
    const again = withSessionToken(session, 'session-2', 2_000);
    expect(again).toMatchObject({ token: 'session-2', apiKey: 'api-key-1' });
    expect(withoutSession(again)).toEqual({ token: 'api-key-1' });
  });

  it('has nothing to keep without an API key, and a new API key replaces any session', () => {
    const session = withSessionToken({}, 'session-1', 1_000);
    expect(session.apiKey).toBeUndefined();
    expect(presentedToken(session, 5_000)).toBe('session-1');
    expect(withoutSession(session)).toEqual({});
    expect(withApiKeyToken(withSessionToken(withApiKeyToken({}, 'old'), 's', 1), 'new')).toEqual({ token: 'new' });
  });
});
