/**
 * What every command runs with: the streams, the global flags, the profile store and one client.
 * Connection (CONTRACT 1): `--url`, else `$LEDGER_URL`, else the profile, else 127.0.0.1:8470;
 * token: `--token`, else `$LEDGER_TOKEN`, else the profile's.
 */
import { randomBytes } from 'node:crypto';
import { LedgerClient } from './client.js';
import type { Io } from './io.js';
import { clientKeyRandomBytes, timeoutDefaultMs, timeoutMaxMs } from './limits.js';
import { Output } from './output.js';
import { integer } from './parse.js';
import { type Profile, ProfileStore, defaultOrigin, defaultRpId, defaultUrl } from './profiles.js';

export interface GlobalOptions {
  url?: string;
  token?: string;
  profile?: string;
  json?: boolean;
  field?: string;
  timeoutMs?: string;
}

export class Context {
  readonly out: Output;
  private store: ProfileStore | undefined;
  private opened: LedgerClient | undefined;
  private madeClientKey: string | undefined;

  constructor(
    readonly io: Io,
    readonly globals: GlobalOptions,
  ) {
    this.out = new Output(io, globals);
  }

  /** The profile store, opened on first use (flags and environment alone need none). */
  async profiles(): Promise<ProfileStore> {
    this.store ??= await ProfileStore.open(this.io.env.LEDGERCTL_CONFIG_DIR);
    return this.store;
  }

  /** The profile in use: `--profile`, else `$LEDGER_PROFILE`, else the active one, else `default`. */
  async profileName(): Promise<string> {
    return this.globals.profile ?? this.io.env.LEDGER_PROFILE ?? (await this.profiles()).active ?? 'default';
  }

  /** The profile's settings; an unsaved profile gets the defaults and the connection in use. */
  async profile(): Promise<Profile> {
    const saved = (await this.profiles()).get(await this.profileName());
    return saved ?? { url: await this.url(), rpId: defaultRpId, origin: defaultOrigin };
  }

  private async url(): Promise<string> {
    const given = this.globals.url ?? this.io.env.LEDGER_URL;
    if (given !== undefined) return given;
    return (await this.profiles()).get(await this.profileName())?.url ?? defaultUrl;
  }

  private async token(): Promise<string | undefined> {
    const given = this.globals.token ?? this.io.env.LEDGER_TOKEN;
    if (given !== undefined) return given;
    return (await this.profiles()).secretsOf(await this.profileName()).token;
  }

  /** `--timeout-ms`: the bound of each request and of a wait for a decision. */
  get timeoutMs(): number {
    return integer('--timeout-ms', this.globals.timeoutMs ?? String(timeoutDefaultMs), 1, timeoutMaxMs);
  }

  /** Resolves the connection once; every later call returns the same client. */
  async connect(): Promise<void> {
    this.opened ??= new LedgerClient(await this.url(), await this.token(), this.timeoutMs);
  }

  /**
   * The client key of what this invocation submits: `--client-key`, else one made at random for
   * this invocation (CONTRACT 11), shown on stderr so that running the command again can reuse it.
   * Every send of the invocation (its own retries, an enrolment's repeat) uses the same key.
   */
  clientKey(given: string | undefined): string {
    if (given !== undefined) return given;
    if (this.madeClientKey === undefined) {
      this.madeClientKey = randomBytes(clientKeyRandomBytes).toString('hex');
      this.out.note(`client key ${this.madeClientKey}`);
    }
    return this.madeClientKey;
  }

  client(): LedgerClient {
    if (this.opened === undefined) throw new Error('Context.client() before connect()');
    return this.opened;
  }

  async close(): Promise<void> {
    await this.opened?.close();
  }
}
