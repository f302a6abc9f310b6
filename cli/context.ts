/**
 * What every command runs with: the streams, the global flags, the profile store and one client.
 * Connection (CONTRACT 1): `--url`, else `$LEDGER_URL`, else the profile, else 127.0.0.1:8470;
 * token: `--token`, else `$LEDGER_TOKEN`, else the profile's.
 */
import { LedgerClient } from './client.js';
import type { Io } from './io.js';
import { Output } from './output.js';
import { type Profile, ProfileStore, defaultOrigin, defaultRpId, defaultUrl } from './profiles.js';

export interface GlobalOptions {
  url?: string;
  token?: string;
  profile?: string;
  json?: boolean;
  field?: string;
}

export class Context {
  readonly out: Output;
  private store: ProfileStore | undefined;
  private opened: LedgerClient | undefined;

  constructor(
    readonly io: Io,
    readonly globals: GlobalOptions,
  ) {
    this.out = new Output(io, globals);
  }

  get profiles(): ProfileStore {
    this.store ??= new ProfileStore(this.io.env.LEDGERCTL_CONFIG_DIR);
    return this.store;
  }

  /** The profile in use: `--profile`, else `$LEDGER_PROFILE`, else the active one, else `default`. */
  get profileName(): string {
    return this.globals.profile ?? this.io.env.LEDGER_PROFILE ?? this.profiles.active ?? 'default';
  }

  /** The profile's settings; an unsaved profile gets the defaults and the connection in use. */
  get profile(): Profile {
    return this.profiles.get(this.profileName) ?? { url: this.url, rpId: defaultRpId, origin: defaultOrigin };
  }

  get url(): string {
    return this.globals.url ?? this.io.env.LEDGER_URL ?? this.profiles.get(this.profileName)?.url ?? defaultUrl;
  }

  get token(): string | undefined {
    return this.globals.token ?? this.io.env.LEDGER_TOKEN ?? this.profiles.secretsOf(this.profileName).token;
  }

  client(): LedgerClient {
    this.opened ??= new LedgerClient(this.url, this.token);
    return this.opened;
  }

  async close(): Promise<void> {
    await this.opened?.close();
  }
}
