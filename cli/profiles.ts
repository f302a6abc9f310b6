/**
 * Profiles, in two JSON files (cli/json-file.ts): where a service is (config.json) and what proves who we are there
 * (secrets.json: tokens, ed25519 private keys, the software passkey). Both files are mode 0600, and
 * secrets are never printed by `profile show`.
 */
import { join } from 'node:path';
import { UsageError } from './errors.js';
import { JsonFile, configDirDefault } from './json-file.js';

export interface Profile {
  url: string;
  /** The relying party the software passkey signs for (CONTRACT 1 defaults). */
  rpId: string;
  origin: string;
  /** Names saved for accounts (`accounts open --save-as`), each standing for its identifier. */
  accounts?: Record<string, string>;
  /** The asset symbols `assets list` last saw at this profile's service, for shell completion. */
  assets?: string[];
}

export interface KeyCredential {
  scheme: 'key';
  /** PKCS#8 PEM of the ed25519 private key. */
  privateKeyPem: string;
  publicKeyHex: string;
}

export interface SoftwarePasskey {
  scheme: 'webauthn-es256';
  /** The WebAuthn credential id (raw id), base64url. */
  rawId: string;
  /** PKCS#8 PEM of the P-256 private key. */
  privateKeyPem: string;
  rpId: string;
  origin: string;
  /** The service's name for it (`did:ledger:cred:…`), once the registration is decided. */
  credential: string | null;
  /** The last signature counter used; each assertion uses the next. */
  signCount: number;
}

export interface ProfileSecrets {
  token?: string;
  /** Set while `token` is a session from a passkey sign-in: when it stops working. */
  sessionExpiresAtMs?: number;
  /** The profile's API key, kept aside while a session is its token. */
  apiKey?: string;
  /** Key credentials by credential id. */
  keys?: Record<string, KeyCredential>;
  passkey?: SoftwarePasskey;
  /** Registrations sent under a client key, by that key: a retry resends them exactly. */
  sent?: Record<string, { fields: Record<string, unknown>; secret: KeyCredential | SoftwarePasskey | null }>;
}

/** `secrets` with `apiKey` as its token (no session, nothing kept aside). */
export function withApiKeyToken(secrets: ProfileSecrets, apiKey: string): ProfileSecrets {
  const { sessionExpiresAtMs: _session, apiKey: _kept, ...rest } = secrets;
  return { ...rest, token: apiKey };
}

/** `secrets` with a session as its token; an API key it held is kept aside, never dropped. */
export function withSessionToken(secrets: ProfileSecrets, session: string, expiresAtMs: number): ProfileSecrets {
  const apiKey = secrets.sessionExpiresAtMs === undefined ? (secrets.token ?? secrets.apiKey) : secrets.apiKey;
  return { ...secrets, token: session, sessionExpiresAtMs: expiresAtMs, ...(apiKey === undefined ? {} : { apiKey }) };
}

/** `secrets` signed out of its session: the API key kept aside, if any, is the token again. */
export function withoutSession(secrets: ProfileSecrets): ProfileSecrets {
  const { token: _forgotten, sessionExpiresAtMs: _session, apiKey, ...rest } = secrets;
  return apiKey === undefined ? rest : { ...rest, token: apiKey };
}

/** The token to present at `nowMs`: a session past its expiry gives way to the API key kept aside. */
export function presentedToken(secrets: ProfileSecrets, nowMs: number): string | undefined {
  const expired = secrets.sessionExpiresAtMs !== undefined && nowMs >= secrets.sessionExpiresAtMs;
  return expired && secrets.apiKey !== undefined ? secrets.apiKey : secrets.token;
}

interface ConfigFile {
  active?: string;
  profiles: Record<string, Profile>;
}

export const defaultUrl = 'http://127.0.0.1:8470';
export const defaultRpId = 'localhost';
export const defaultOrigin = 'http://localhost:8470';
const profileName = /^[A-Za-z0-9._-]{1,64}$/;

export class ProfileStore {
  private readonly config: JsonFile<ConfigFile>;
  private readonly secrets: JsonFile<Record<string, ProfileSecrets>>;

  /** `dir`: `$LEDGERCTL_CONFIG_DIR`, else the user's config directory. Nothing is read until a profile is needed. */
  static async open(dir: string | undefined): Promise<ProfileStore> {
    return new ProfileStore(dir ?? configDirDefault());
  }

  private constructor(dir: string) {
    this.config = new JsonFile<ConfigFile>(join(dir, 'config.json'), { profiles: {} });
    this.secrets = new JsonFile<Record<string, ProfileSecrets>>(join(dir, 'secrets.json'));
  }

  get active(): string | undefined {
    return this.config.get('active');
  }

  names(): string[] {
    return Object.keys(this.config.get('profiles')).sort();
  }

  get(name: string): Profile | undefined {
    const profiles = this.config.get('profiles');
    // Own entries only: `constructor` or `__proto__` name no profile.
    return Object.hasOwn(profiles, name) ? profiles[name] : undefined;
  }

  put(name: string, profile: Profile): void {
    if (!profileName.test(name)) throw new UsageError(`profile names are 1-64 of [A-Za-z0-9._-]: ${name}`);
    this.config.set('profiles', { ...this.config.get('profiles'), [name]: profile });
  }

  use(name: string): void {
    this.mustExist(name);
    this.config.set('active', name);
  }

  /** Forgets a profile and its secrets; the active profile removed leaves none active. */
  remove(name: string): void {
    this.mustExist(name);
    const { [name]: _removed, ...rest } = this.config.get('profiles');
    this.config.set('profiles', rest);
    if (this.active === name) this.config.delete('active');
    this.secrets.delete(name);
  }

  /** Renames a profile with its secrets (and keeps it active if it was). */
  rename(from: string, to: string): void {
    const profile = this.mustExist(from);
    if (this.get(to) !== undefined) throw new UsageError(`a profile named ${to} exists already (remove it first)`);
    const secrets = this.secretsOf(from);
    const wasActive = this.active === from;
    this.put(to, profile);
    if (Object.keys(secrets).length > 0) this.updateSecrets(to, () => secrets);
    if (wasActive) this.use(to);
    this.remove(from);
  }

  private mustExist(name: string): Profile {
    const profile = this.get(name);
    if (profile === undefined) throw new UsageError(`no profile named ${name} (see: ledgerctl profile list)`);
    return profile;
  }

  secretsOf(name: string): ProfileSecrets {
    return this.secrets.get(name) ?? {};
  }

  updateSecrets(name: string, update: (current: ProfileSecrets) => ProfileSecrets): void {
    this.secrets.set(name, update(this.secretsOf(name)));
  }

  get paths(): { config: string; secrets: string } {
    return { config: this.config.path, secrets: this.secrets.path };
  }
}
